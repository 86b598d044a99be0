# tracekit: graph 3 (forward), compile id 2/0
# nodes 14, ops 6, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0]
# param: back.7.0.weight
# param: back.7.0.bias
# param: back.8.0.weight
# param: back.8.0.bias
# param: back.9.0.weight
# param: back.9.0.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149)

class GraphModule(torch.nn.Module):
    def forward(self, input_14: "f32[16, 320]", l_self_modules_back_modules_7_modules_0_parameters_weight_: "f32[320, 320]", l_self_modules_back_modules_7_modules_0_parameters_bias_: "f32[320]", l_self_modules_back_modules_8_modules_0_parameters_weight_: "f32[320, 320]", l_self_modules_back_modules_8_modules_0_parameters_bias_: "f32[320]", l_self_modules_back_modules_9_modules_0_parameters_weight_: "f32[320, 320]", l_self_modules_back_modules_9_modules_0_parameters_bias_: "f32[320]"):
        # File: /work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149, code: return self.back(x)
        linear: "f32[16, 320]" = torch._C._nn.linear(input_14, l_self_modules_back_modules_7_modules_0_parameters_weight_, l_self_modules_back_modules_7_modules_0_parameters_bias_);  input_14 = l_self_modules_back_modules_7_modules_0_parameters_weight_ = l_self_modules_back_modules_7_modules_0_parameters_bias_ = None
        relu: "f32[16, 320]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[16, 320]" = torch._C._nn.linear(relu, l_self_modules_back_modules_8_modules_0_parameters_weight_, l_self_modules_back_modules_8_modules_0_parameters_bias_);  relu = l_self_modules_back_modules_8_modules_0_parameters_weight_ = l_self_modules_back_modules_8_modules_0_parameters_bias_ = None
        relu_1: "f32[16, 320]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        linear_2: "f32[16, 320]" = torch._C._nn.linear(relu_1, l_self_modules_back_modules_9_modules_0_parameters_weight_, l_self_modules_back_modules_9_modules_0_parameters_bias_);  relu_1 = l_self_modules_back_modules_9_modules_0_parameters_weight_ = l_self_modules_back_modules_9_modules_0_parameters_bias_ = None
        relu_2: "f32[16, 320]" = torch.nn.functional.relu(linear_2, inplace = False);  linear_2 = None
        return (relu_2,)
