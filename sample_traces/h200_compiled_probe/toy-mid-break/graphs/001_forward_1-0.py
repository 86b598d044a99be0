# tracekit: graph 1 (forward), compile id 1/0
# nodes 10, ops 4, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1]
# param: front.10.0.weight
# param: front.10.0.bias
# param: front.11.0.weight
# param: front.11.0.bias
# ends with: graph_break: Call to `torch._dynamo.graph_break()` (/work/main/tracekit/profile/models.py:149 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_20: "f32[24, 384]", l_self_modules_front_modules_10_modules_0_parameters_weight_: "f32[384, 384]", l_self_modules_front_modules_10_modules_0_parameters_bias_: "f32[384]", l_self_modules_front_modules_11_modules_0_parameters_weight_: "f32[384, 384]", l_self_modules_front_modules_11_modules_0_parameters_bias_: "f32[384]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[24, 384]" = torch._C._nn.linear(input_20, l_self_modules_front_modules_10_modules_0_parameters_weight_, l_self_modules_front_modules_10_modules_0_parameters_bias_);  input_20 = l_self_modules_front_modules_10_modules_0_parameters_weight_ = l_self_modules_front_modules_10_modules_0_parameters_bias_ = None
        relu: "f32[24, 384]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[24, 384]" = torch._C._nn.linear(relu, l_self_modules_front_modules_11_modules_0_parameters_weight_, l_self_modules_front_modules_11_modules_0_parameters_bias_);  relu = l_self_modules_front_modules_11_modules_0_parameters_weight_ = l_self_modules_front_modules_11_modules_0_parameters_bias_ = None
        relu_1: "f32[24, 384]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        return (relu_1,)
