# tracekit: graph 7 (forward), compile id 1/0
# nodes 25, ops 14, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [6, 7]
# param: blocks.4.qkv.weight
# param: blocks.4.qkv.bias
# param: blocks.4.proj.weight
# param: blocks.4.proj.bias
# param: blocks.4.ln2.weight
# param: blocks.4.ln2.bias
# param: blocks.4.mlp.0.weight
# param: blocks.4.mlp.0.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, layer_norm_8: "f32[8, 512, 1024]", l_self_modules_blocks_modules_4_modules_qkv_parameters_weight_: "f32[3072, 1024]", l_self_modules_blocks_modules_4_modules_qkv_parameters_bias_: "f32[3072]", l_self_modules_blocks_modules_4_modules_proj_parameters_weight_: "f32[1024, 1024]", l_self_modules_blocks_modules_4_modules_proj_parameters_bias_: "f32[1024]", x_8: "f32[8, 512, 1024]", l_self_modules_blocks_modules_4_modules_ln2_parameters_weight_: "f32[1024]", l_self_modules_blocks_modules_4_modules_ln2_parameters_bias_: "f32[1024]", l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_weight_: "f32[4096, 1024]", l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_bias_: "f32[4096]"):
        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        linear: "bf16[8, 512, 3072]" = torch._C._nn.linear(layer_norm_8, l_self_modules_blocks_modules_4_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_4_modules_qkv_parameters_bias_);  layer_norm_8 = l_self_modules_blocks_modules_4_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_4_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view: "bf16[8, 512, 4, 3, 256]" = linear.view(8, 512, 4, 3, 256);  linear = None
        permute: "bf16[3, 8, 4, 512, 256]" = view.permute(3, 0, 2, 1, 4);  view = None
        getitem: "bf16[8, 4, 512, 256]" = permute[0]
        getitem_1: "bf16[8, 4, 512, 256]" = permute[1]
        getitem_2: "bf16[8, 4, 512, 256]" = permute[2];  permute = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention: "bf16[8, 4, 512, 256]" = torch._C._nn.scaled_dot_product_attention(getitem, getitem_1, getitem_2, is_causal = True);  getitem = getitem_1 = getitem_2 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose: "bf16[8, 512, 4, 256]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        reshape: "bf16[8, 512, 1024]" = transpose.reshape(8, 512, 1024);  transpose = None
        linear_1: "bf16[8, 512, 1024]" = torch._C._nn.linear(reshape, l_self_modules_blocks_modules_4_modules_proj_parameters_weight_, l_self_modules_blocks_modules_4_modules_proj_parameters_bias_);  reshape = l_self_modules_blocks_modules_4_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_4_modules_proj_parameters_bias_ = None
        add: "f32[8, 512, 1024]" = x_8 + linear_1;  x_8 = linear_1 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm: "f32[8, 512, 1024]" = torch.nn.functional.layer_norm(add, (1024,), l_self_modules_blocks_modules_4_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_4_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_4_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_4_modules_ln2_parameters_bias_ = None
        linear_2: "bf16[8, 512, 4096]" = torch._C._nn.linear(layer_norm, l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_bias_);  layer_norm = l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_bias_ = None
        gelu: "bf16[8, 512, 4096]" = torch._C._nn.gelu(linear_2, approximate = 'none');  linear_2 = None
        return (gelu, add)
