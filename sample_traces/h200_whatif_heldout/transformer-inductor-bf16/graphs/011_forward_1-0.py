# tracekit: graph 11 (forward), compile id 1/0
# nodes 28, ops 15, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [2, 3]
# param: blocks.6.mlp.2.weight
# param: blocks.6.mlp.2.bias
# param: blocks.7.ln1.weight
# param: blocks.7.ln1.bias
# param: blocks.7.qkv.weight
# param: blocks.7.qkv.bias
# param: blocks.7.proj.weight
# param: blocks.7.proj.bias
# param: blocks.7.ln2.weight
# param: blocks.7.ln2.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, input_20: "bf16[8, 512, 4096]", l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_: "f32[1024, 4096]", l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_: "f32[1024]", x_13: "f32[8, 512, 1024]", l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_: "f32[1024]", l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_: "f32[1024]", l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_: "f32[3072, 1024]", l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_: "f32[3072]", l_self_modules_blocks_modules_7_modules_proj_parameters_weight_: "f32[1024, 1024]", l_self_modules_blocks_modules_7_modules_proj_parameters_bias_: "f32[1024]", l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_: "f32[1024]", l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        linear: "bf16[8, 512, 1024]" = torch._C._nn.linear(input_20, l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_);  input_20 = l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_ = None
        add: "f32[8, 512, 1024]" = x_13 + linear;  x_13 = linear = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm: "f32[8, 512, 1024]" = torch.nn.functional.layer_norm(add, (1024,), l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_ = None
        linear_1: "bf16[8, 512, 3072]" = torch._C._nn.linear(layer_norm, l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view: "bf16[8, 512, 4, 3, 256]" = linear_1.view(8, 512, 4, 3, 256);  linear_1 = None
        permute: "bf16[3, 8, 4, 512, 256]" = view.permute(3, 0, 2, 1, 4);  view = None
        getitem: "bf16[8, 4, 512, 256]" = permute[0]
        getitem_1: "bf16[8, 4, 512, 256]" = permute[1]
        getitem_2: "bf16[8, 4, 512, 256]" = permute[2];  permute = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention: "bf16[8, 4, 512, 256]" = torch._C._nn.scaled_dot_product_attention(getitem, getitem_1, getitem_2, is_causal = True);  getitem = getitem_1 = getitem_2 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose: "bf16[8, 512, 4, 256]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        reshape: "bf16[8, 512, 1024]" = transpose.reshape(8, 512, 1024);  transpose = None
        linear_2: "bf16[8, 512, 1024]" = torch._C._nn.linear(reshape, l_self_modules_blocks_modules_7_modules_proj_parameters_weight_, l_self_modules_blocks_modules_7_modules_proj_parameters_bias_);  reshape = l_self_modules_blocks_modules_7_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_7_modules_proj_parameters_bias_ = None
        add_1: "f32[8, 512, 1024]" = add + linear_2;  add = linear_2 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_1: "f32[8, 512, 1024]" = torch.nn.functional.layer_norm(add_1, (1024,), l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_ = None
        return (layer_norm_1, add_1)
