# tracekit: graph 3 (forward), compile id 1/0
# nodes 6, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [12, 13]
# param: front.3.0.weight
# param: front.3.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, input_6: "f32[512, 4096]", l_self_modules_front_modules_3_modules_0_parameters_weight_: "f32[4096, 4096]", l_self_modules_front_modules_3_modules_0_parameters_bias_: "f32[4096]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[512, 4096]" = torch._C._nn.linear(input_6, l_self_modules_front_modules_3_modules_0_parameters_weight_, l_self_modules_front_modules_3_modules_0_parameters_bias_);  input_6 = l_self_modules_front_modules_3_modules_0_parameters_weight_ = l_self_modules_front_modules_3_modules_0_parameters_bias_ = None
        relu: "f32[512, 4096]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        return (relu,)
