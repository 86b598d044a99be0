# tracekit: graph 3 (forward), compile id 2/0
# nodes 18, ops 8, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: back.4.0.weight
# param: back.4.0.bias
# param: back.5.0.weight
# param: back.5.0.bias
# param: back.6.0.weight
# param: back.6.0.bias
# param: back.7.0.weight
# param: back.7.0.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149)

class GraphModule(torch.nn.Module):
    def forward(self, input_8: "f32[32, 256]", l_self_modules_back_modules_4_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_back_modules_4_modules_0_parameters_bias_: "f32[256]", l_self_modules_back_modules_5_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_back_modules_5_modules_0_parameters_bias_: "f32[256]", l_self_modules_back_modules_6_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_back_modules_6_modules_0_parameters_bias_: "f32[256]", l_self_modules_back_modules_7_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_back_modules_7_modules_0_parameters_bias_: "f32[256]"):
        # File: /work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149, code: return self.back(x)
        linear: "f32[32, 256]" = torch._C._nn.linear(input_8, l_self_modules_back_modules_4_modules_0_parameters_weight_, l_self_modules_back_modules_4_modules_0_parameters_bias_);  input_8 = l_self_modules_back_modules_4_modules_0_parameters_weight_ = l_self_modules_back_modules_4_modules_0_parameters_bias_ = None
        relu: "f32[32, 256]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[32, 256]" = torch._C._nn.linear(relu, l_self_modules_back_modules_5_modules_0_parameters_weight_, l_self_modules_back_modules_5_modules_0_parameters_bias_);  relu = l_self_modules_back_modules_5_modules_0_parameters_weight_ = l_self_modules_back_modules_5_modules_0_parameters_bias_ = None
        relu_1: "f32[32, 256]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        linear_2: "f32[32, 256]" = torch._C._nn.linear(relu_1, l_self_modules_back_modules_6_modules_0_parameters_weight_, l_self_modules_back_modules_6_modules_0_parameters_bias_);  relu_1 = l_self_modules_back_modules_6_modules_0_parameters_weight_ = l_self_modules_back_modules_6_modules_0_parameters_bias_ = None
        relu_2: "f32[32, 256]" = torch.nn.functional.relu(linear_2, inplace = False);  linear_2 = None
        linear_3: "f32[32, 256]" = torch._C._nn.linear(relu_2, l_self_modules_back_modules_7_modules_0_parameters_weight_, l_self_modules_back_modules_7_modules_0_parameters_bias_);  relu_2 = l_self_modules_back_modules_7_modules_0_parameters_weight_ = l_self_modules_back_modules_7_modules_0_parameters_bias_ = None
        relu_3: "f32[32, 256]" = torch.nn.functional.relu(linear_3, inplace = False);  linear_3 = None
        return (relu_3,)
