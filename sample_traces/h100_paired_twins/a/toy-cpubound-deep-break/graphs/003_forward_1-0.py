# tracekit: graph 3 (forward), compile id 1/0
# nodes 6, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: back.15.0.weight
# param: back.15.0.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149)

class GraphModule(torch.nn.Module):
    def forward(self, input_30: "f32[16, 512]", l_self_modules_back_modules_15_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_back_modules_15_modules_0_parameters_bias_: "f32[512]"):
        # File: /work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149, code: return self.back(x)
        linear: "f32[16, 512]" = torch._C._nn.linear(input_30, l_self_modules_back_modules_15_modules_0_parameters_weight_, l_self_modules_back_modules_15_modules_0_parameters_bias_);  input_30 = l_self_modules_back_modules_15_modules_0_parameters_weight_ = l_self_modules_back_modules_15_modules_0_parameters_bias_ = None
        relu: "f32[16, 512]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        return (relu,)
