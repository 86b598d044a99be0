# tracekit: graph 1 (forward), compile id 0/0
# nodes 102, ops 50, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1, 2]
# param: front.6.0.weight
# param: front.6.0.bias
# param: front.7.0.weight
# param: front.7.0.bias
# param: front.8.0.weight
# param: front.8.0.bias
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
# param: front.16.0.weight
# param: front.16.0.bias
# param: front.17.0.weight
# param: front.17.0.bias
# param: front.18.0.weight
# param: front.18.0.bias
# param: front.19.0.weight
# param: front.19.0.bias
# param: front.20.0.weight
# param: front.20.0.bias
# param: front.21.0.weight
# param: front.21.0.bias
# param: front.22.0.weight
# param: front.22.0.bias
# param: front.23.0.weight
# param: front.23.0.bias
# param: front.24.0.weight
# param: front.24.0.bias
# param: front.25.0.weight
# param: front.25.0.bias
# param: front.26.0.weight
# param: front.26.0.bias
# param: front.27.0.weight
# param: front.27.0.bias
# param: front.28.0.weight
# param: front.28.0.bias
# param: front.29.0.weight
# param: front.29.0.bias
# param: front.30.0.weight
# param: front.30.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, input_12: "f32[16, 512]", l_self_modules_front_modules_6_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_6_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_7_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_7_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_8_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_8_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_9_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_9_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_10_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_10_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_11_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_11_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_12_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_12_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_13_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_13_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_14_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_14_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_15_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_15_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_16_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_16_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_17_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_17_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_18_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_18_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_19_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_19_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_20_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_20_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_21_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_21_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_22_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_22_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_23_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_23_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_24_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_24_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_25_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_25_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_26_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_26_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_27_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_27_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_28_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_28_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_29_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_29_modules_0_parameters_bias_: "f32[512]", l_self_modules_front_modules_30_modules_0_parameters_weight_: "f32[512, 512]", l_self_modules_front_modules_30_modules_0_parameters_bias_: "f32[512]"):
        # File: /work/main/.gpu/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[16, 512]" = torch._C._nn.linear(input_12, l_self_modules_front_modules_6_modules_0_parameters_weight_, l_self_modules_front_modules_6_modules_0_parameters_bias_);  input_12 = l_self_modules_front_modules_6_modules_0_parameters_weight_ = l_self_modules_front_modules_6_modules_0_parameters_bias_ = None
        relu: "f32[16, 512]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[16, 512]" = torch._C._nn.linear(relu, l_self_modules_front_modules_7_modules_0_parameters_weight_, l_self_modules_front_modules_7_modules_0_parameters_bias_);  relu = l_self_modules_front_modules_7_modules_0_parameters_weight_ = l_self_modules_front_modules_7_modules_0_parameters_bias_ = None
        relu_1: "f32[16, 512]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        linear_2: "f32[16, 512]" = torch._C._nn.linear(relu_1, l_self_modules_front_modules_8_modules_0_parameters_weight_, l_self_modules_front_modules_8_modules_0_parameters_bias_);  relu_1 = l_self_modules_front_modules_8_modules_0_parameters_weight_ = l_self_modules_front_modules_8_modules_0_parameters_bias_ = None
        relu_2: "f32[16, 512]" = torch.nn.functional.relu(linear_2, inplace = False);  linear_2 = None
        linear_3: "f32[16, 512]" = torch._C._nn.linear(relu_2, l_self_modules_front_modules_9_modules_0_parameters_weight_, l_self_modules_front_modules_9_modules_0_parameters_bias_);  relu_2 = l_self_modules_front_modules_9_modules_0_parameters_weight_ = l_self_modules_front_modules_9_modules_0_parameters_bias_ = None
        relu_3: "f32[16, 512]" = torch.nn.functional.relu(linear_3, inplace = False);  linear_3 = None
        linear_4: "f32[16, 512]" = torch._C._nn.linear(relu_3, l_self_modules_front_modules_10_modules_0_parameters_weight_, l_self_modules_front_modules_10_modules_0_parameters_bias_);  relu_3 = l_self_modules_front_modules_10_modules_0_parameters_weight_ = l_self_modules_front_modules_10_modules_0_parameters_bias_ = None
        relu_4: "f32[16, 512]" = torch.nn.functional.relu(linear_4, inplace = False);  linear_4 = None
        linear_5: "f32[16, 512]" = torch._C._nn.linear(relu_4, l_self_modules_front_modules_11_modules_0_parameters_weight_, l_self_modules_front_modules_11_modules_0_parameters_bias_);  relu_4 = l_self_modules_front_modules_11_modules_0_parameters_weight_ = l_self_modules_front_modules_11_modules_0_parameters_bias_ = None
        relu_5: "f32[16, 512]" = torch.nn.functional.relu(linear_5, inplace = False);  linear_5 = None
        linear_6: "f32[16, 512]" = torch._C._nn.linear(relu_5, l_self_modules_front_modules_12_modules_0_parameters_weight_, l_self_modules_front_modules_12_modules_0_parameters_bias_);  relu_5 = l_self_modules_front_modules_12_modules_0_parameters_weight_ = l_self_modules_front_modules_12_modules_0_parameters_bias_ = None
        relu_6: "f32[16, 512]" = torch.nn.functional.relu(linear_6, inplace = False);  linear_6 = None
        linear_7: "f32[16, 512]" = torch._C._nn.linear(relu_6, l_self_modules_front_modules_13_modules_0_parameters_weight_, l_self_modules_front_modules_13_modules_0_parameters_bias_);  relu_6 = l_self_modules_front_modules_13_modules_0_parameters_weight_ = l_self_modules_front_modules_13_modules_0_parameters_bias_ = None
        relu_7: "f32[16, 512]" = torch.nn.functional.relu(linear_7, inplace = False);  linear_7 = None
        linear_8: "f32[16, 512]" = torch._C._nn.linear(relu_7, l_self_modules_front_modules_14_modules_0_parameters_weight_, l_self_modules_front_modules_14_modules_0_parameters_bias_);  relu_7 = l_self_modules_front_modules_14_modules_0_parameters_weight_ = l_self_modules_front_modules_14_modules_0_parameters_bias_ = None
        relu_8: "f32[16, 512]" = torch.nn.functional.relu(linear_8, inplace = False);  linear_8 = None
        linear_9: "f32[16, 512]" = torch._C._nn.linear(relu_8, l_self_modules_front_modules_15_modules_0_parameters_weight_, l_self_modules_front_modules_15_modules_0_parameters_bias_);  relu_8 = l_self_modules_front_modules_15_modules_0_parameters_weight_ = l_self_modules_front_modules_15_modules_0_parameters_bias_ = None
        relu_9: "f32[16, 512]" = torch.nn.functional.relu(linear_9, inplace = False);  linear_9 = None
        linear_10: "f32[16, 512]" = torch._C._nn.linear(relu_9, l_self_modules_front_modules_16_modules_0_parameters_weight_, l_self_modules_front_modules_16_modules_0_parameters_bias_);  relu_9 = l_self_modules_front_modules_16_modules_0_parameters_weight_ = l_self_modules_front_modules_16_modules_0_parameters_bias_ = None
        relu_10: "f32[16, 512]" = torch.nn.functional.relu(linear_10, inplace = False);  linear_10 = None
        linear_11: "f32[16, 512]" = torch._C._nn.linear(relu_10, l_self_modules_front_modules_17_modules_0_parameters_weight_, l_self_modules_front_modules_17_modules_0_parameters_bias_);  relu_10 = l_self_modules_front_modules_17_modules_0_parameters_weight_ = l_self_modules_front_modules_17_modules_0_parameters_bias_ = None
        relu_11: "f32[16, 512]" = torch.nn.functional.relu(linear_11, inplace = False);  linear_11 = None
        linear_12: "f32[16, 512]" = torch._C._nn.linear(relu_11, l_self_modules_front_modules_18_modules_0_parameters_weight_, l_self_modules_front_modules_18_modules_0_parameters_bias_);  relu_11 = l_self_modules_front_modules_18_modules_0_parameters_weight_ = l_self_modules_front_modules_18_modules_0_parameters_bias_ = None
        relu_12: "f32[16, 512]" = torch.nn.functional.relu(linear_12, inplace = False);  linear_12 = None
        linear_13: "f32[16, 512]" = torch._C._nn.linear(relu_12, l_self_modules_front_modules_19_modules_0_parameters_weight_, l_self_modules_front_modules_19_modules_0_parameters_bias_);  relu_12 = l_self_modules_front_modules_19_modules_0_parameters_weight_ = l_self_modules_front_modules_19_modules_0_parameters_bias_ = None
        relu_13: "f32[16, 512]" = torch.nn.functional.relu(linear_13, inplace = False);  linear_13 = None
        linear_14: "f32[16, 512]" = torch._C._nn.linear(relu_13, l_self_modules_front_modules_20_modules_0_parameters_weight_, l_self_modules_front_modules_20_modules_0_parameters_bias_);  relu_13 = l_self_modules_front_modules_20_modules_0_parameters_weight_ = l_self_modules_front_modules_20_modules_0_parameters_bias_ = None
        relu_14: "f32[16, 512]" = torch.nn.functional.relu(linear_14, inplace = False);  linear_14 = None
        linear_15: "f32[16, 512]" = torch._C._nn.linear(relu_14, l_self_modules_front_modules_21_modules_0_parameters_weight_, l_self_modules_front_modules_21_modules_0_parameters_bias_);  relu_14 = l_self_modules_front_modules_21_modules_0_parameters_weight_ = l_self_modules_front_modules_21_modules_0_parameters_bias_ = None
        relu_15: "f32[16, 512]" = torch.nn.functional.relu(linear_15, inplace = False);  linear_15 = None
        linear_16: "f32[16, 512]" = torch._C._nn.linear(relu_15, l_self_modules_front_modules_22_modules_0_parameters_weight_, l_self_modules_front_modules_22_modules_0_parameters_bias_);  relu_15 = l_self_modules_front_modules_22_modules_0_parameters_weight_ = l_self_modules_front_modules_22_modules_0_parameters_bias_ = None
        relu_16: "f32[16, 512]" = torch.nn.functional.relu(linear_16, inplace = False);  linear_16 = None
        linear_17: "f32[16, 512]" = torch._C._nn.linear(relu_16, l_self_modules_front_modules_23_modules_0_parameters_weight_, l_self_modules_front_modules_23_modules_0_parameters_bias_);  relu_16 = l_self_modules_front_modules_23_modules_0_parameters_weight_ = l_self_modules_front_modules_23_modules_0_parameters_bias_ = None
        relu_17: "f32[16, 512]" = torch.nn.functional.relu(linear_17, inplace = False);  linear_17 = None
        linear_18: "f32[16, 512]" = torch._C._nn.linear(relu_17, l_self_modules_front_modules_24_modules_0_parameters_weight_, l_self_modules_front_modules_24_modules_0_parameters_bias_);  relu_17 = l_self_modules_front_modules_24_modules_0_parameters_weight_ = l_self_modules_front_modules_24_modules_0_parameters_bias_ = None
        relu_18: "f32[16, 512]" = torch.nn.functional.relu(linear_18, inplace = False);  linear_18 = None
        linear_19: "f32[16, 512]" = torch._C._nn.linear(relu_18, l_self_modules_front_modules_25_modules_0_parameters_weight_, l_self_modules_front_modules_25_modules_0_parameters_bias_);  relu_18 = l_self_modules_front_modules_25_modules_0_parameters_weight_ = l_self_modules_front_modules_25_modules_0_parameters_bias_ = None
        relu_19: "f32[16, 512]" = torch.nn.functional.relu(linear_19, inplace = False);  linear_19 = None
        linear_20: "f32[16, 512]" = torch._C._nn.linear(relu_19, l_self_modules_front_modules_26_modules_0_parameters_weight_, l_self_modules_front_modules_26_modules_0_parameters_bias_);  relu_19 = l_self_modules_front_modules_26_modules_0_parameters_weight_ = l_self_modules_front_modules_26_modules_0_parameters_bias_ = None
        relu_20: "f32[16, 512]" = torch.nn.functional.relu(linear_20, inplace = False);  linear_20 = None
        linear_21: "f32[16, 512]" = torch._C._nn.linear(relu_20, l_self_modules_front_modules_27_modules_0_parameters_weight_, l_self_modules_front_modules_27_modules_0_parameters_bias_);  relu_20 = l_self_modules_front_modules_27_modules_0_parameters_weight_ = l_self_modules_front_modules_27_modules_0_parameters_bias_ = None
        relu_21: "f32[16, 512]" = torch.nn.functional.relu(linear_21, inplace = False);  linear_21 = None
        linear_22: "f32[16, 512]" = torch._C._nn.linear(relu_21, l_self_modules_front_modules_28_modules_0_parameters_weight_, l_self_modules_front_modules_28_modules_0_parameters_bias_);  relu_21 = l_self_modules_front_modules_28_modules_0_parameters_weight_ = l_self_modules_front_modules_28_modules_0_parameters_bias_ = None
        relu_22: "f32[16, 512]" = torch.nn.functional.relu(linear_22, inplace = False);  linear_22 = None
        linear_23: "f32[16, 512]" = torch._C._nn.linear(relu_22, l_self_modules_front_modules_29_modules_0_parameters_weight_, l_self_modules_front_modules_29_modules_0_parameters_bias_);  relu_22 = l_self_modules_front_modules_29_modules_0_parameters_weight_ = l_self_modules_front_modules_29_modules_0_parameters_bias_ = None
        relu_23: "f32[16, 512]" = torch.nn.functional.relu(linear_23, inplace = False);  linear_23 = None
        linear_24: "f32[16, 512]" = torch._C._nn.linear(relu_23, l_self_modules_front_modules_30_modules_0_parameters_weight_, l_self_modules_front_modules_30_modules_0_parameters_bias_);  relu_23 = l_self_modules_front_modules_30_modules_0_parameters_weight_ = l_self_modules_front_modules_30_modules_0_parameters_bias_ = None
        relu_24: "f32[16, 512]" = torch.nn.functional.relu(linear_24, inplace = False);  linear_24 = None
        return (relu_24,)
