# tracekit: graph 1 (forward), compile id 0/0
# nodes 6, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1]
# param: front.15.0.weight
# param: front.15.0.bias
# ends with: graph_break: Call to `torch._dynamo.graph_break()` (/work/main/tracekit/profile/models.py:149 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_30: "f32[16, 512]", l_self_modules_front_modules_15_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_15_modules_0_parameters_bias_: "f32[512]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[16, 512]" = torch._C._nn.linear(input_30, l_self_modules_front_modules_15_modules_0_parameters_weight_, l_self_modules_front_modules_15_modules_0_parameters_bias_);  input_30 = l_self_modules_front_modules_15_modules_0_parameters_weight_ = l_self_modules_front_modules_15_modules_0_parameters_bias_ = None
        relu: "f32[16, 512]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        return (relu,)
