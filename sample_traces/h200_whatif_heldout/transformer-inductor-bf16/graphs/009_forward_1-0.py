# tracekit: graph 9 (forward), compile id 1/0
# nodes 14, ops 5, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [4, 5]
# param: blocks.5.mlp.0.weight
# param: blocks.5.mlp.0.bias
# param: blocks.5.mlp.2.weight
# param: blocks.5.mlp.2.bias
# param: blocks.6.ln1.weight
# param: blocks.6.ln1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, layer_norm_11: "f32[8, 512, 1024]", l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_: "f32[4096, 1024]", l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_: "f32[4096]", l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_: "f32[1024, 4096]", l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_: "f32[1024]", x_11: "f32[8, 512, 1024]", l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_: "f32[1024]", l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        linear: "bf16[8, 512, 4096]" = torch._C._nn.linear(layer_norm_11, l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_);  layer_norm_11 = l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_ = None
        gelu: "bf16[8, 512, 4096]" = torch._C._nn.gelu(linear, approximate = 'none');  linear = None
        linear_1: "bf16[8, 512, 1024]" = torch._C._nn.linear(gelu, l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_);  gelu = l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_ = None
        add: "f32[8, 512, 1024]" = x_11 + linear_1;  x_11 = linear_1 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm: "f32[8, 512, 1024]" = torch.nn.functional.layer_norm(add, (1024,), l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_ = None
        return (layer_norm, add)
