# tracekit: graph 0 (forward), compile id 1/0
# nodes 178, ops 88, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1]
# param: front.0.0.weight
# param: front.0.0.bias
# param: front.1.0.weight
# param: front.1.0.bias
# param: front.2.0.weight
# param: front.2.0.bias
# param: front.3.0.weight
# param: front.3.0.bias
# param: front.4.0.weight
# param: front.4.0.bias
# param: front.5.0.weight
# param: front.5.0.bias
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
# param: front.31.0.weight
# param: front.31.0.bias
# param: front.32.0.weight
# param: front.32.0.bias
# param: front.33.0.weight
# param: front.33.0.bias
# param: front.34.0.weight
# param: front.34.0.bias
# param: front.35.0.weight
# param: front.35.0.bias
# param: front.36.0.weight
# param: front.36.0.bias
# param: front.37.0.weight
# param: front.37.0.bias
# param: front.38.0.weight
# param: front.38.0.bias
# param: front.39.0.weight
# param: front.39.0.bias
# param: front.40.0.weight
# param: front.40.0.bias
# param: front.41.0.weight
# param: front.41.0.bias
# param: front.42.0.weight
# param: front.42.0.bias
# param: front.43.0.weight
# param: front.43.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[64, 256]", l_self_modules_front_modules_0_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_0_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_1_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_1_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_2_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_2_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_3_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_3_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_4_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_4_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_5_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_5_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_6_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_6_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_7_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_7_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_8_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_8_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_9_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_9_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_10_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_10_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_11_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_11_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_12_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_12_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_13_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_13_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_14_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_14_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_15_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_15_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_16_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_16_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_17_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_17_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_18_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_18_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_19_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_19_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_20_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_20_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_21_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_21_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_22_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_22_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_23_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_23_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_24_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_24_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_25_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_25_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_26_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_26_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_27_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_27_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_28_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_28_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_29_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_29_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_30_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_30_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_31_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_31_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_32_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_32_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_33_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_33_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_34_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_34_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_35_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_35_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_36_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_36_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_37_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_37_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_38_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_38_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_39_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_39_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_40_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_40_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_41_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_41_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_42_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_42_modules_0_parameters_bias_: "f32[256]", l_self_modules_front_modules_43_modules_0_parameters_weight_: "f32[256, 256]", l_self_modules_front_modules_43_modules_0_parameters_bias_: "f32[256]"):
        # File: /work/main/tracekit/profile/models.py:145 in forward, code: x = self.front(x)
        linear: "f32[64, 256]" = torch._C._nn.linear(l_x_, l_self_modules_front_modules_0_modules_0_parameters_weight_, l_self_modules_front_modules_0_modules_0_parameters_bias_);  l_x_ = l_self_modules_front_modules_0_modules_0_parameters_weight_ = l_self_modules_front_modules_0_modules_0_parameters_bias_ = None
        relu: "f32[64, 256]" = torch.nn.functional.relu(linear, inplace = False);  linear = None
        linear_1: "f32[64, 256]" = torch._C._nn.linear(relu, l_self_modules_front_modules_1_modules_0_parameters_weight_, l_self_modules_front_modules_1_modules_0_parameters_bias_);  relu = l_self_modules_front_modules_1_modules_0_parameters_weight_ = l_self_modules_front_modules_1_modules_0_parameters_bias_ = None
        relu_1: "f32[64, 256]" = torch.nn.functional.relu(linear_1, inplace = False);  linear_1 = None
        linear_2: "f32[64, 256]" = torch._C._nn.linear(relu_1, l_self_modules_front_modules_2_modules_0_parameters_weight_, l_self_modules_front_modules_2_modules_0_parameters_bias_);  relu_1 = l_self_modules_front_modules_2_modules_0_parameters_weight_ = l_self_modules_front_modules_2_modules_0_parameters_bias_ = None
        relu_2: "f32[64, 256]" = torch.nn.functional.relu(linear_2, inplace = False);  linear_2 = None
        linear_3: "f32[64, 256]" = torch._C._nn.linear(relu_2, l_self_modules_front_modules_3_modules_0_parameters_weight_, l_self_modules_front_modules_3_modules_0_parameters_bias_);  relu_2 = l_self_modules_front_modules_3_modules_0_parameters_weight_ = l_self_modules_front_modules_3_modules_0_parameters_bias_ = None
        relu_3: "f32[64, 256]" = torch.nn.functional.relu(linear_3, inplace = False);  linear_3 = None
        linear_4: "f32[64, 256]" = torch._C._nn.linear(relu_3, l_self_modules_front_modules_4_modules_0_parameters_weight_, l_self_modules_front_modules_4_modules_0_parameters_bias_);  relu_3 = l_self_modules_front_modules_4_modules_0_parameters_weight_ = l_self_modules_front_modules_4_modules_0_parameters_bias_ = None
        relu_4: "f32[64, 256]" = torch.nn.functional.relu(linear_4, inplace = False);  linear_4 = None
        linear_5: "f32[64, 256]" = torch._C._nn.linear(relu_4, l_self_modules_front_modules_5_modules_0_parameters_weight_, l_self_modules_front_modules_5_modules_0_parameters_bias_);  relu_4 = l_self_modules_front_modules_5_modules_0_parameters_weight_ = l_self_modules_front_modules_5_modules_0_parameters_bias_ = None
        relu_5: "f32[64, 256]" = torch.nn.functional.relu(linear_5, inplace = False);  linear_5 = None
        linear_6: "f32[64, 256]" = torch._C._nn.linear(relu_5, l_self_modules_front_modules_6_modules_0_parameters_weight_, l_self_modules_front_modules_6_modules_0_parameters_bias_);  relu_5 = l_self_modules_front_modules_6_modules_0_parameters_weight_ = l_self_modules_front_modules_6_modules_0_parameters_bias_ = None
        relu_6: "f32[64, 256]" = torch.nn.functional.relu(linear_6, inplace = False);  linear_6 = None
        linear_7: "f32[64, 256]" = torch._C._nn.linear(relu_6, l_self_modules_front_modules_7_modules_0_parameters_weight_, l_self_modules_front_modules_7_modules_0_parameters_bias_);  relu_6 = l_self_modules_front_modules_7_modules_0_parameters_weight_ = l_self_modules_front_modules_7_modules_0_parameters_bias_ = None
        relu_7: "f32[64, 256]" = torch.nn.functional.relu(linear_7, inplace = False);  linear_7 = None
        linear_8: "f32[64, 256]" = torch._C._nn.linear(relu_7, l_self_modules_front_modules_8_modules_0_parameters_weight_, l_self_modules_front_modules_8_modules_0_parameters_bias_);  relu_7 = l_self_modules_front_modules_8_modules_0_parameters_weight_ = l_self_modules_front_modules_8_modules_0_parameters_bias_ = None
        relu_8: "f32[64, 256]" = torch.nn.functional.relu(linear_8, inplace = False);  linear_8 = None
        linear_9: "f32[64, 256]" = torch._C._nn.linear(relu_8, l_self_modules_front_modules_9_modules_0_parameters_weight_, l_self_modules_front_modules_9_modules_0_parameters_bias_);  relu_8 = l_self_modules_front_modules_9_modules_0_parameters_weight_ = l_self_modules_front_modules_9_modules_0_parameters_bias_ = None
        relu_9: "f32[64, 256]" = torch.nn.functional.relu(linear_9, inplace = False);  linear_9 = None
        linear_10: "f32[64, 256]" = torch._C._nn.linear(relu_9, l_self_modules_front_modules_10_modules_0_parameters_weight_, l_self_modules_front_modules_10_modules_0_parameters_bias_);  relu_9 = l_self_modules_front_modules_10_modules_0_parameters_weight_ = l_self_modules_front_modules_10_modules_0_parameters_bias_ = None
        relu_10: "f32[64, 256]" = torch.nn.functional.relu(linear_10, inplace = False);  linear_10 = None
        linear_11: "f32[64, 256]" = torch._C._nn.linear(relu_10, l_self_modules_front_modules_11_modules_0_parameters_weight_, l_self_modules_front_modules_11_modules_0_parameters_bias_);  relu_10 = l_self_modules_front_modules_11_modules_0_parameters_weight_ = l_self_modules_front_modules_11_modules_0_parameters_bias_ = None
        relu_11: "f32[64, 256]" = torch.nn.functional.relu(linear_11, inplace = False);  linear_11 = None
        linear_12: "f32[64, 256]" = torch._C._nn.linear(relu_11, l_self_modules_front_modules_12_modules_0_parameters_weight_, l_self_modules_front_modules_12_modules_0_parameters_bias_);  relu_11 = l_self_modules_front_modules_12_modules_0_parameters_weight_ = l_self_modules_front_modules_12_modules_0_parameters_bias_ = None
        relu_12: "f32[64, 256]" = torch.nn.functional.relu(linear_12, inplace = False);  linear_12 = None
        linear_13: "f32[64, 256]" = torch._C._nn.linear(relu_12, l_self_modules_front_modules_13_modules_0_parameters_weight_, l_self_modules_front_modules_13_modules_0_parameters_bias_);  relu_12 = l_self_modules_front_modules_13_modules_0_parameters_weight_ = l_self_modules_front_modules_13_modules_0_parameters_bias_ = None
        relu_13: "f32[64, 256]" = torch.nn.functional.relu(linear_13, inplace = False);  linear_13 = None
        linear_14: "f32[64, 256]" = torch._C._nn.linear(relu_13, l_self_modules_front_modules_14_modules_0_parameters_weight_, l_self_modules_front_modules_14_modules_0_parameters_bias_);  relu_13 = l_self_modules_front_modules_14_modules_0_parameters_weight_ = l_self_modules_front_modules_14_modules_0_parameters_bias_ = None
        relu_14: "f32[64, 256]" = torch.nn.functional.relu(linear_14, inplace = False);  linear_14 = None
        linear_15: "f32[64, 256]" = torch._C._nn.linear(relu_14, l_self_modules_front_modules_15_modules_0_parameters_weight_, l_self_modules_front_modules_15_modules_0_parameters_bias_);  relu_14 = l_self_modules_front_modules_15_modules_0_parameters_weight_ = l_self_modules_front_modules_15_modules_0_parameters_bias_ = None
        relu_15: "f32[64, 256]" = torch.nn.functional.relu(linear_15, inplace = False);  linear_15 = None
        linear_16: "f32[64, 256]" = torch._C._nn.linear(relu_15, l_self_modules_front_modules_16_modules_0_parameters_weight_, l_self_modules_front_modules_16_modules_0_parameters_bias_);  relu_15 = l_self_modules_front_modules_16_modules_0_parameters_weight_ = l_self_modules_front_modules_16_modules_0_parameters_bias_ = None
        relu_16: "f32[64, 256]" = torch.nn.functional.relu(linear_16, inplace = False);  linear_16 = None
        linear_17: "f32[64, 256]" = torch._C._nn.linear(relu_16, l_self_modules_front_modules_17_modules_0_parameters_weight_, l_self_modules_front_modules_17_modules_0_parameters_bias_);  relu_16 = l_self_modules_front_modules_17_modules_0_parameters_weight_ = l_self_modules_front_modules_17_modules_0_parameters_bias_ = None
        relu_17: "f32[64, 256]" = torch.nn.functional.relu(linear_17, inplace = False);  linear_17 = None
        linear_18: "f32[64, 256]" = torch._C._nn.linear(relu_17, l_self_modules_front_modules_18_modules_0_parameters_weight_, l_self_modules_front_modules_18_modules_0_parameters_bias_);  relu_17 = l_self_modules_front_modules_18_modules_0_parameters_weight_ = l_self_modules_front_modules_18_modules_0_parameters_bias_ = None
        relu_18: "f32[64, 256]" = torch.nn.functional.relu(linear_18, inplace = False);  linear_18 = None
        linear_19: "f32[64, 256]" = torch._C._nn.linear(relu_18, l_self_modules_front_modules_19_modules_0_parameters_weight_, l_self_modules_front_modules_19_modules_0_parameters_bias_);  relu_18 = l_self_modules_front_modules_19_modules_0_parameters_weight_ = l_self_modules_front_modules_19_modules_0_parameters_bias_ = None
        relu_19: "f32[64, 256]" = torch.nn.functional.relu(linear_19, inplace = False);  linear_19 = None
        linear_20: "f32[64, 256]" = torch._C._nn.linear(relu_19, l_self_modules_front_modules_20_modules_0_parameters_weight_, l_self_modules_front_modules_20_modules_0_parameters_bias_);  relu_19 = l_self_modules_front_modules_20_modules_0_parameters_weight_ = l_self_modules_front_modules_20_modules_0_parameters_bias_ = None
        relu_20: "f32[64, 256]" = torch.nn.functional.relu(linear_20, inplace = False);  linear_20 = None
        linear_21: "f32[64, 256]" = torch._C._nn.linear(relu_20, l_self_modules_front_modules_21_modules_0_parameters_weight_, l_self_modules_front_modules_21_modules_0_parameters_bias_);  relu_20 = l_self_modules_front_modules_21_modules_0_parameters_weight_ = l_self_modules_front_modules_21_modules_0_parameters_bias_ = None
        relu_21: "f32[64, 256]" = torch.nn.functional.relu(linear_21, inplace = False);  linear_21 = None
        linear_22: "f32[64, 256]" = torch._C._nn.linear(relu_21, l_self_modules_front_modules_22_modules_0_parameters_weight_, l_self_modules_front_modules_22_modules_0_parameters_bias_);  relu_21 = l_self_modules_front_modules_22_modules_0_parameters_weight_ = l_self_modules_front_modules_22_modules_0_parameters_bias_ = None
        relu_22: "f32[64, 256]" = torch.nn.functional.relu(linear_22, inplace = False);  linear_22 = None
        linear_23: "f32[64, 256]" = torch._C._nn.linear(relu_22, l_self_modules_front_modules_23_modules_0_parameters_weight_, l_self_modules_front_modules_23_modules_0_parameters_bias_);  relu_22 = l_self_modules_front_modules_23_modules_0_parameters_weight_ = l_self_modules_front_modules_23_modules_0_parameters_bias_ = None
        relu_23: "f32[64, 256]" = torch.nn.functional.relu(linear_23, inplace = False);  linear_23 = None
        linear_24: "f32[64, 256]" = torch._C._nn.linear(relu_23, l_self_modules_front_modules_24_modules_0_parameters_weight_, l_self_modules_front_modules_24_modules_0_parameters_bias_);  relu_23 = l_self_modules_front_modules_24_modules_0_parameters_weight_ = l_self_modules_front_modules_24_modules_0_parameters_bias_ = None
        relu_24: "f32[64, 256]" = torch.nn.functional.relu(linear_24, inplace = False);  linear_24 = None
        linear_25: "f32[64, 256]" = torch._C._nn.linear(relu_24, l_self_modules_front_modules_25_modules_0_parameters_weight_, l_self_modules_front_modules_25_modules_0_parameters_bias_);  relu_24 = l_self_modules_front_modules_25_modules_0_parameters_weight_ = l_self_modules_front_modules_25_modules_0_parameters_bias_ = None
        relu_25: "f32[64, 256]" = torch.nn.functional.relu(linear_25, inplace = False);  linear_25 = None
        linear_26: "f32[64, 256]" = torch._C._nn.linear(relu_25, l_self_modules_front_modules_26_modules_0_parameters_weight_, l_self_modules_front_modules_26_modules_0_parameters_bias_);  relu_25 = l_self_modules_front_modules_26_modules_0_parameters_weight_ = l_self_modules_front_modules_26_modules_0_parameters_bias_ = None
        relu_26: "f32[64, 256]" = torch.nn.functional.relu(linear_26, inplace = False);  linear_26 = None
        linear_27: "f32[64, 256]" = torch._C._nn.linear(relu_26, l_self_modules_front_modules_27_modules_0_parameters_weight_, l_self_modules_front_modules_27_modules_0_parameters_bias_);  relu_26 = l_self_modules_front_modules_27_modules_0_parameters_weight_ = l_self_modules_front_modules_27_modules_0_parameters_bias_ = None
        relu_27: "f32[64, 256]" = torch.nn.functional.relu(linear_27, inplace = False);  linear_27 = None
        linear_28: "f32[64, 256]" = torch._C._nn.linear(relu_27, l_self_modules_front_modules_28_modules_0_parameters_weight_, l_self_modules_front_modules_28_modules_0_parameters_bias_);  relu_27 = l_self_modules_front_modules_28_modules_0_parameters_weight_ = l_self_modules_front_modules_28_modules_0_parameters_bias_ = None
        relu_28: "f32[64, 256]" = torch.nn.functional.relu(linear_28, inplace = False);  linear_28 = None
        linear_29: "f32[64, 256]" = torch._C._nn.linear(relu_28, l_self_modules_front_modules_29_modules_0_parameters_weight_, l_self_modules_front_modules_29_modules_0_parameters_bias_);  relu_28 = l_self_modules_front_modules_29_modules_0_parameters_weight_ = l_self_modules_front_modules_29_modules_0_parameters_bias_ = None
        relu_29: "f32[64, 256]" = torch.nn.functional.relu(linear_29, inplace = False);  linear_29 = None
        linear_30: "f32[64, 256]" = torch._C._nn.linear(relu_29, l_self_modules_front_modules_30_modules_0_parameters_weight_, l_self_modules_front_modules_30_modules_0_parameters_bias_);  relu_29 = l_self_modules_front_modules_30_modules_0_parameters_weight_ = l_self_modules_front_modules_30_modules_0_parameters_bias_ = None
        relu_30: "f32[64, 256]" = torch.nn.functional.relu(linear_30, inplace = False);  linear_30 = None
        linear_31: "f32[64, 256]" = torch._C._nn.linear(relu_30, l_self_modules_front_modules_31_modules_0_parameters_weight_, l_self_modules_front_modules_31_modules_0_parameters_bias_);  relu_30 = l_self_modules_front_modules_31_modules_0_parameters_weight_ = l_self_modules_front_modules_31_modules_0_parameters_bias_ = None
        relu_31: "f32[64, 256]" = torch.nn.functional.relu(linear_31, inplace = False);  linear_31 = None
        linear_32: "f32[64, 256]" = torch._C._nn.linear(relu_31, l_self_modules_front_modules_32_modules_0_parameters_weight_, l_self_modules_front_modules_32_modules_0_parameters_bias_);  relu_31 = l_self_modules_front_modules_32_modules_0_parameters_weight_ = l_self_modules_front_modules_32_modules_0_parameters_bias_ = None
        relu_32: "f32[64, 256]" = torch.nn.functional.relu(linear_32, inplace = False);  linear_32 = None
        linear_33: "f32[64, 256]" = torch._C._nn.linear(relu_32, l_self_modules_front_modules_33_modules_0_parameters_weight_, l_self_modules_front_modules_33_modules_0_parameters_bias_);  relu_32 = l_self_modules_front_modules_33_modules_0_parameters_weight_ = l_self_modules_front_modules_33_modules_0_parameters_bias_ = None
        relu_33: "f32[64, 256]" = torch.nn.functional.relu(linear_33, inplace = False);  linear_33 = None
        linear_34: "f32[64, 256]" = torch._C._nn.linear(relu_33, l_self_modules_front_modules_34_modules_0_parameters_weight_, l_self_modules_front_modules_34_modules_0_parameters_bias_);  relu_33 = l_self_modules_front_modules_34_modules_0_parameters_weight_ = l_self_modules_front_modules_34_modules_0_parameters_bias_ = None
        relu_34: "f32[64, 256]" = torch.nn.functional.relu(linear_34, inplace = False);  linear_34 = None
        linear_35: "f32[64, 256]" = torch._C._nn.linear(relu_34, l_self_modules_front_modules_35_modules_0_parameters_weight_, l_self_modules_front_modules_35_modules_0_parameters_bias_);  relu_34 = l_self_modules_front_modules_35_modules_0_parameters_weight_ = l_self_modules_front_modules_35_modules_0_parameters_bias_ = None
        relu_35: "f32[64, 256]" = torch.nn.functional.relu(linear_35, inplace = False);  linear_35 = None
        linear_36: "f32[64, 256]" = torch._C._nn.linear(relu_35, l_self_modules_front_modules_36_modules_0_parameters_weight_, l_self_modules_front_modules_36_modules_0_parameters_bias_);  relu_35 = l_self_modules_front_modules_36_modules_0_parameters_weight_ = l_self_modules_front_modules_36_modules_0_parameters_bias_ = None
        relu_36: "f32[64, 256]" = torch.nn.functional.relu(linear_36, inplace = False);  linear_36 = None
        linear_37: "f32[64, 256]" = torch._C._nn.linear(relu_36, l_self_modules_front_modules_37_modules_0_parameters_weight_, l_self_modules_front_modules_37_modules_0_parameters_bias_);  relu_36 = l_self_modules_front_modules_37_modules_0_parameters_weight_ = l_self_modules_front_modules_37_modules_0_parameters_bias_ = None
        relu_37: "f32[64, 256]" = torch.nn.functional.relu(linear_37, inplace = False);  linear_37 = None
        linear_38: "f32[64, 256]" = torch._C._nn.linear(relu_37, l_self_modules_front_modules_38_modules_0_parameters_weight_, l_self_modules_front_modules_38_modules_0_parameters_bias_);  relu_37 = l_self_modules_front_modules_38_modules_0_parameters_weight_ = l_self_modules_front_modules_38_modules_0_parameters_bias_ = None
        relu_38: "f32[64, 256]" = torch.nn.functional.relu(linear_38, inplace = False);  linear_38 = None
        linear_39: "f32[64, 256]" = torch._C._nn.linear(relu_38, l_self_modules_front_modules_39_modules_0_parameters_weight_, l_self_modules_front_modules_39_modules_0_parameters_bias_);  relu_38 = l_self_modules_front_modules_39_modules_0_parameters_weight_ = l_self_modules_front_modules_39_modules_0_parameters_bias_ = None
        relu_39: "f32[64, 256]" = torch.nn.functional.relu(linear_39, inplace = False);  linear_39 = None
        linear_40: "f32[64, 256]" = torch._C._nn.linear(relu_39, l_self_modules_front_modules_40_modules_0_parameters_weight_, l_self_modules_front_modules_40_modules_0_parameters_bias_);  relu_39 = l_self_modules_front_modules_40_modules_0_parameters_weight_ = l_self_modules_front_modules_40_modules_0_parameters_bias_ = None
        relu_40: "f32[64, 256]" = torch.nn.functional.relu(linear_40, inplace = False);  linear_40 = None
        linear_41: "f32[64, 256]" = torch._C._nn.linear(relu_40, l_self_modules_front_modules_41_modules_0_parameters_weight_, l_self_modules_front_modules_41_modules_0_parameters_bias_);  relu_40 = l_self_modules_front_modules_41_modules_0_parameters_weight_ = l_self_modules_front_modules_41_modules_0_parameters_bias_ = None
        relu_41: "f32[64, 256]" = torch.nn.functional.relu(linear_41, inplace = False);  linear_41 = None
        linear_42: "f32[64, 256]" = torch._C._nn.linear(relu_41, l_self_modules_front_modules_42_modules_0_parameters_weight_, l_self_modules_front_modules_42_modules_0_parameters_bias_);  relu_41 = l_self_modules_front_modules_42_modules_0_parameters_weight_ = l_self_modules_front_modules_42_modules_0_parameters_bias_ = None
        relu_42: "f32[64, 256]" = torch.nn.functional.relu(linear_42, inplace = False);  linear_42 = None
        linear_43: "f32[64, 256]" = torch._C._nn.linear(relu_42, l_self_modules_front_modules_43_modules_0_parameters_weight_, l_self_modules_front_modules_43_modules_0_parameters_bias_);  relu_42 = l_self_modules_front_modules_43_modules_0_parameters_weight_ = l_self_modules_front_modules_43_modules_0_parameters_bias_ = None
        relu_43: "f32[64, 256]" = torch.nn.functional.relu(linear_43, inplace = False);  linear_43 = None
        return (relu_43,)
