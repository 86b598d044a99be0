# tracekit: graph 4 (forward), compile id 1/0
# nodes 6, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: front.23.0.weight
# param: front.23.0.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:150 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_46: "f32[128, 1024]", l_self_modules_front_modules_23_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_23_modules_0_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[128, 1024]" = torch._C._nn.linear(input_46, l_self_modules_front_modules_23_modules_0_parameters_weight_, l_self_modules_front_modules_23_modules_0_parameters_bias_);  input_46 = l_self_modules_front_modules_23_modules_0_parameters_weight_ = l_self_modules_front_modules_23_modules_0_parameters_bias_ = None
        relu: "f32[128, 1024]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        return (relu,)
