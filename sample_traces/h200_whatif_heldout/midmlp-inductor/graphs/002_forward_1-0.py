# tracekit: graph 2 (forward), compile id 1/0
# nodes 30, ops 14, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [2, 3]
# param: front.9.0.weight
# param: front.9.0.bias
# param: front.10.0.weight
# param: front.10.0.bias
# param: front.11.0.weight
# param: front.11.0.bias
# param: front.12.0.weight
# param: front.12.0.bias
# param: front.13.0.weight
# param: front.13.0.bias
# param: front.14.0.weight
# param: front.14.0.bias
# param: front.15.0.weight
# param: front.15.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, input_18: "f32[128, 1024]", l_self_modules_front_modules_9_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_9_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_10_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_10_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_11_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_11_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_12_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_12_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_13_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_13_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_14_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_14_modules_0_parameters_bias_: "f32[1024]", l_self_modules_front_modules_15_modules_0_parameters_weight_: "f32[1024, 1024]", l_self_modules_front_modules_15_modules_0_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[128, 1024]" = torch._C._nn.linear(input_18, l_self_modules_front_modules_9_modules_0_parameters_weight_, l_self_modules_front_modules_9_modules_0_parameters_bias_);  input_18 = l_self_modules_front_modules_9_modules_0_parameters_weight_ = l_self_modules_front_modules_9_modules_0_parameters_bias_ = None
        relu: "f32[128, 1024]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[128, 1024]" = torch._C._nn.linear(relu, l_self_modules_front_modules_10_modules_0_parameters_weight_, l_self_modules_front_modules_10_modules_0_parameters_bias_);  relu = l_self_modules_front_modules_10_modules_0_parameters_weight_ = l_self_modules_front_modules_10_modules_0_parameters_bias_ = None
        relu_1: "f32[128, 1024]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        linear_2: "f32[128, 1024]" = torch._C._nn.linear(relu_1, l_self_modules_front_modules_11_modules_0_parameters_weight_, l_self_modules_front_modules_11_modules_0_parameters_bias_);  relu_1 = l_self_modules_front_modules_11_modules_0_parameters_weight_ = l_self_modules_front_modules_11_modules_0_parameters_bias_ = None
        relu_2: "f32[128, 1024]" = torch.nn.functional.relu(linear_2, inplace = False);  linear_2 = None
        linear_3: "f32[128, 1024]" = torch._C._nn.linear(relu_2, l_self_modules_front_modules_12_modules_0_parameters_weight_, l_self_modules_front_modules_12_modules_0_parameters_bias_);  relu_2 = l_self_modules_front_modules_12_modules_0_parameters_weight_ = l_self_modules_front_modules_12_modules_0_parameters_bias_ = None
        relu_3: "f32[128, 1024]" = torch.nn.functional.relu(linear_3, inplace = False);  linear_3 = None
        linear_4: "f32[128, 1024]" = torch._C._nn.linear(relu_3, l_self_modules_front_modules_13_modules_0_parameters_weight_, l_self_modules_front_modules_13_modules_0_parameters_bias_);  relu_3 = l_self_modules_front_modules_13_modules_0_parameters_weight_ = l_self_modules_front_modules_13_modules_0_parameters_bias_ = None
        relu_4: "f32[128, 1024]" = torch.nn.functional.relu(linear_4, inplace = False);  linear_4 = None
        linear_5: "f32[128, 1024]" = torch._C._nn.linear(relu_4, l_self_modules_front_modules_14_modules_0_parameters_weight_, l_self_modules_front_modules_14_modules_0_parameters_bias_);  relu_4 = l_self_modules_front_modules_14_modules_0_parameters_weight_ = l_self_modules_front_modules_14_modules_0_parameters_bias_ = None
        relu_5: "f32[128, 1024]" = torch.nn.functional.relu(linear_5, inplace = False);  linear_5 = None
        linear_6: "f32[128, 1024]" = torch._C._nn.linear(relu_5, l_self_modules_front_modules_15_modules_0_parameters_weight_, l_self_modules_front_modules_15_modules_0_parameters_bias_);  relu_5 = l_self_modules_front_modules_15_modules_0_parameters_weight_ = l_self_modules_front_modules_15_modules_0_parameters_bias_ = None
        relu_6: "f32[128, 1024]" = torch.nn.functional.relu(linear_6, inplace = False);  linear_6 = None
        return (relu_6,)
