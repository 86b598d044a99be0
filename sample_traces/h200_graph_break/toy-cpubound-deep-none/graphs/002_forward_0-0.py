# tracekit: graph 2 (forward), compile id 0/0
# nodes 6, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: front.31.0.weight
# param: front.31.0.bias
# ends with: end: return_value (/work/main/.gpu/tracekit/profile/models.py:150 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_62: "f32[16, 512]", l_self_modules_front_modules_31_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_31_modules_0_parameters_bias_: "f32[512]"):
        # File: /work/main/.gpu/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[16, 512]" = torch._C._nn.linear(input_62, l_self_modules_front_modules_31_modules_0_parameters_weight_, l_self_modules_front_modules_31_modules_0_parameters_bias_);  input_62 = l_self_modules_front_modules_31_modules_0_parameters_weight_ = l_self_modules_front_modules_31_modules_0_parameters_bias_ = None
        relu: "f32[16, 512]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        return (relu,)
