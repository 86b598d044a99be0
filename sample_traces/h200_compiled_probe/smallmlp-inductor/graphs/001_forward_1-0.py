# tracekit: graph 1 (forward), compile id 1/0
# nodes 18, ops 8, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: front.44.0.weight
# param: front.44.0.bias
# param: front.45.0.weight
# param: front.45.0.bias
# param: front.46.0.weight
# param: front.46.0.bias
# param: front.47.0.weight
# param: front.47.0.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:150 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_88: "f32[64, 256]", l_self_modules_front_modules_44_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_44_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_45_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_45_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_46_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_46_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_47_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_47_modules_0_parameters_bias_: "f32[256]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[64, 256]" = torch._C._nn.linear(input_88, l_self_modules_front_modules_44_modules_0_parameters_weight_, l_self_modules_front_modules_44_modules_0_parameters_bias_);  input_88 = l_self_modules_front_modules_44_modules_0_parameters_weight_ = l_self_modules_front_modules_44_modules_0_parameters_bias_ = None
        relu: "f32[64, 256]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[64, 256]" = torch._C._nn.linear(relu, l_self_modules_front_modules_45_modules_0_parameters_weight_, l_self_modules_front_modules_45_modules_0_parameters_bias_);  relu = l_self_modules_front_modules_45_modules_0_parameters_weight_ = l_self_modules_front_modules_45_modules_0_parameters_bias_ = None
        relu_1: "f32[64, 256]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        linear_2: "f32[64, 256]" = torch._C._nn.linear(relu_1, l_self_modules_front_modules_46_modules_0_parameters_weight_, l_self_modules_front_modules_46_modules_0_parameters_bias_);  relu_1 = l_self_modules_front_modules_46_modules_0_parameters_weight_ = l_self_modules_front_modules_46_modules_0_parameters_bias_ = None
        relu_2: "f32[64, 256]" = torch.nn.functional.relu(linear_2, inplace = False);  linear_2 = None
        linear_3: "f32[64, 256]" = torch._C._nn.linear(relu_2, l_self_modules_front_modules_47_modules_0_parameters_weight_, l_self_modules_front_modules_47_modules_0_parameters_bias_);  relu_2 = l_self_modules_front_modules_47_modules_0_parameters_weight_ = l_self_modules_front_modules_47_modules_0_parameters_bias_ = None
        relu_3: "f32[64, 256]" = torch.nn.functional.relu(linear_3, inplace = False);  linear_3 = None
        return (relu_3,)
