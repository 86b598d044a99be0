# tracekit: graph 0 (forward), compile id 1/0
# nodes 10, ops 4, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [4]
# param: front.0.0.weight
# param: front.0.0.bias
# param: front.1.0.weight
# param: front.1.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[128, 1024]", l_self_modules_front_modules_0_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_0_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_1_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_1_modules_0_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[128, 1024]" = torch._C._nn.linear(l_x_, l_self_modules_front_modules_0_modules_0_parameters_weight_, l_self_modules_front_modules_0_modules_0_parameters_bias_);  l_x_ = l_self_modules_front_modules_0_modules_0_parameters_weight_ = l_self_modules_front_modules_0_modules_0_parameters_bias_ = None
        relu: "f32[128, 1024]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[128, 1024]" = torch._C._nn.linear(relu, l_self_modules_front_modules_1_modules_0_parameters_weight_, l_self_modules_front_modules_1_modules_0_parameters_bias_);  relu = l_self_modules_front_modules_1_modules_0_parameters_weight_ = l_self_modules_front_modules_1_modules_0_parameters_bias_ = None
        relu_1: "f32[128, 1024]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        return (relu_1,)
