# tracekit: graph 10 (forward), compile id 2/0
# nodes 6, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [5, 6]
# param: back.2.0.weight
# param: back.2.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, input_4: "f32[512, 4096]", l_self_modules_back_modules_2_modules_0_parameters_weight_: "f32[4096, 4096]", l_self_modules_back_modules_2_modules_0_parameters_bias_: "f32[4096]"):
        # File: /work/main/tracekit/profile/models.py:150 in torch_dynamo_resume_in_forward_at_149, code: return self.back(x)
        linear: "f32[512, 4096]" = torch._C._nn.linear(input_4, l_self_modules_back_modules_2_modules_0_parameters_weight_, l_self_modules_back_modules_2_modules_0_parameters_bias_);  input_4 = l_self_modules_back_modules_2_modules_0_parameters_weight_ = l_self_modules_back_modules_2_modules_0_parameters_bias_ = None
        relu: "f32[512, 4096]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        return (relu,)
