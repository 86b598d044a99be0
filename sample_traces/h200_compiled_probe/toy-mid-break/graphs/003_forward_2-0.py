# tracekit: graph 3 (forward), compile id 2/0
# nodes 10, ops 4, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0]
# param: back.10.0.weight
# param: back.10.0.bias
# param: back.11.0.weight
# param: back.11.0.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149)

class GraphModule(torch.nn.Module):
    def forward(self, input_20: "f32[24, 384]", l_self_modules_back_modules_10_modules_0_parameters_weight_: "f32[384, 384]", l_self_modules_back_modules_10_modules_0_parameters_bias_: "f32[384]", l_self_modules_back_modules_11_modules_0_parameters_weight_: "f32[384, 384]", l_self_modules_back_modules_11_modules_0_parameters_bias_: "f32[384]"):
        # File: /work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149, code: return self.back(x)
        linear: "f32[24, 384]" = torch._C._nn.linear(input_20, l_self_modules_back_modules_10_modules_0_parameters_weight_, l_self_modules_back_modules_10_modules_0_parameters_bias_);  input_20 = l_self_modules_back_modules_10_modules_0_parameters_weight_ = l_self_modules_back_modules_10_modules_0_parameters_bias_ = None
        relu: "f32[24, 384]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[24, 384]" = torch._C._nn.linear(relu, l_self_modules_back_modules_11_modules_0_parameters_weight_, l_self_modules_back_modules_11_modules_0_parameters_bias_);  relu = l_self_modules_back_modules_11_modules_0_parameters_weight_ = l_self_modules_back_modules_11_modules_0_parameters_bias_ = None
        relu_1: "f32[24, 384]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        return (relu_1,)
