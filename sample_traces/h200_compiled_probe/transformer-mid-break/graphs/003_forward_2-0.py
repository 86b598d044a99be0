# tracekit: graph 3 (forward), compile id 2/0
# nodes 108, ops 59, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1, 2]
# param: blocks.4.proj.weight
# param: blocks.4.proj.bias
# param: blocks.4.ln2.weight
# param: blocks.4.ln2.bias
# param: blocks.4.mlp.0.weight
# param: blocks.4.mlp.0.bias
# param: blocks.4.mlp.2.weight
# param: blocks.4.mlp.2.bias
# param: blocks.5.ln1.weight
# param: blocks.5.ln1.bias
# param: blocks.5.qkv.weight
# param: blocks.5.qkv.bias
# param: blocks.5.proj.weight
# param: blocks.5.proj.bias
# param: blocks.5.ln2.weight
# param: blocks.5.ln2.bias
# param: blocks.5.mlp.0.weight
# param: blocks.5.mlp.0.bias
# param: blocks.5.mlp.2.weight
# param: blocks.5.mlp.2.bias
# param: blocks.6.ln1.weight
# param: blocks.6.ln1.bias
# param: blocks.6.qkv.weight
# param: blocks.6.qkv.bias
# param: blocks.6.proj.weight
# param: blocks.6.proj.bias
# param: blocks.6.ln2.weight
# param: blocks.6.ln2.bias
# param: blocks.6.mlp.0.weight
# param: blocks.6.mlp.0.bias
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
# param: blocks.7.mlp.0.weight
# param: blocks.7.mlp.0.bias
# param: blocks.7.mlp.2.weight
# param: blocks.7.mlp.2.bias
# param: ln.weight
# param: ln.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, reshape: "f32[4, 64, 384]", l_self_modules_blocks_modules_4_modules_proj_parameters_weight_: "f32[384, 384]", l_self_modules_blocks_modules_4_modules_proj_parameters_bias_: "f32[384]", l_x_: "f32[4, 64, 384]", l_self_modules_blocks_modules_4_modules_ln2_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_4_modules_ln2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_weight_: "f32[1536, 384]", l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_bias_: "f32[1536]", l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_weight_: "f32[384, 1536]", l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_5_modules_ln1_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_5_modules_ln1_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_5_modules_qkv_parameters_weight_: "f32[1152, 384]", l_self_modules_blocks_modules_5_modules_qkv_parameters_bias_: "f32[1152]", l_self_modules_blocks_modules_5_modules_proj_parameters_weight_: "f32[384, 384]", l_self_modules_blocks_modules_5_modules_proj_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_5_modules_ln2_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_5_modules_ln2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_: "f32[1536, 384]", l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_: "f32[1536]", l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_: "f32[384, 1536]", l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_6_modules_qkv_parameters_weight_: "f32[1152, 384]", l_self_modules_blocks_modules_6_modules_qkv_parameters_bias_: "f32[1152]", l_self_modules_blocks_modules_6_modules_proj_parameters_weight_: "f32[384, 384]", l_self_modules_blocks_modules_6_modules_proj_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_6_modules_ln2_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_6_modules_ln2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_weight_: "f32[1536, 384]", l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_bias_: "f32[1536]", l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_: "f32[384, 1536]", l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_: "f32[1152, 384]", l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_: "f32[1152]", l_self_modules_blocks_modules_7_modules_proj_parameters_weight_: "f32[384, 384]", l_self_modules_blocks_modules_7_modules_proj_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_: "f32[1536, 384]", l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_: "f32[1536]", l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_: "f32[384, 1536]", l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_: "f32[384]", l_self_modules_ln_parameters_weight_: "f32[384]", l_self_modules_ln_parameters_bias_: "f32[384]"):
        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        linear: "f32[4, 64, 384]" = torch._C._nn.linear(reshape, l_self_modules_blocks_modules_4_modules_proj_parameters_weight_, l_self_modules_blocks_modules_4_modules_proj_parameters_bias_);  reshape = l_self_modules_blocks_modules_4_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_4_modules_proj_parameters_bias_ = None
        add: "f32[4, 64, 384]" = l_x_ + linear;  l_x_ = linear = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add, (384,), l_self_modules_blocks_modules_4_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_4_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_4_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_4_modules_ln2_parameters_bias_ = None
        linear_1: "f32[4, 64, 1536]" = torch._C._nn.linear(layer_norm, l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_bias_);  layer_norm = l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_4_modules_mlp_modules_0_parameters_bias_ = None
        gelu: "f32[4, 64, 1536]" = torch._C._nn.gelu(linear_1, approximate = 'none');  linear_1 = None
        linear_2: "f32[4, 64, 384]" = torch._C._nn.linear(gelu, l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_bias_);  gelu = l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_bias_ = None
        add_1: "f32[4, 64, 384]" = add + linear_2;  add = linear_2 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_1: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_1, (384,), l_self_modules_blocks_modules_5_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_5_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_5_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_5_modules_ln1_parameters_bias_ = None
        linear_3: "f32[4, 64, 1152]" = torch._C._nn.linear(layer_norm_1, l_self_modules_blocks_modules_5_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_5_modules_qkv_parameters_bias_);  layer_norm_1 = l_self_modules_blocks_modules_5_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_5_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view: "f32[4, 64, 4, 3, 96]" = linear_3.view(4, 64, 4, 3, 96);  linear_3 = None
        permute: "f32[3, 4, 4, 64, 96]" = view.permute(3, 0, 2, 1, 4);  view = None
        getitem: "f32[4, 4, 64, 96]" = permute[0]
        getitem_1: "f32[4, 4, 64, 96]" = permute[1]
        getitem_2: "f32[4, 4, 64, 96]" = permute[2];  permute = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention: "f32[4, 4, 64, 96]" = torch._C._nn.scaled_dot_product_attention(getitem, getitem_1, getitem_2, is_causal = True);  getitem = getitem_1 = getitem_2 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose: "f32[4, 64, 4, 96]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        reshape_1: "f32[4, 64, 384]" = transpose.reshape(4, 64, 384);  transpose = None
        linear_4: "f32[4, 64, 384]" = torch._C._nn.linear(reshape_1, l_self_modules_blocks_modules_5_modules_proj_parameters_weight_, l_self_modules_blocks_modules_5_modules_proj_parameters_bias_);  reshape_1 = l_self_modules_blocks_modules_5_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_5_modules_proj_parameters_bias_ = None
        add_2: "f32[4, 64, 384]" = add_1 + linear_4;  add_1 = linear_4 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_2: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_2, (384,), l_self_modules_blocks_modules_5_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_5_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_5_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_5_modules_ln2_parameters_bias_ = None
        linear_5: "f32[4, 64, 1536]" = torch._C._nn.linear(layer_norm_2, l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_);  layer_norm_2 = l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_ = None
        gelu_1: "f32[4, 64, 1536]" = torch._C._nn.gelu(linear_5, approximate = 'none');  linear_5 = None
        linear_6: "f32[4, 64, 384]" = torch._C._nn.linear(gelu_1, l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_);  gelu_1 = l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_ = None
        add_3: "f32[4, 64, 384]" = add_2 + linear_6;  add_2 = linear_6 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_3: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_3, (384,), l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_ = None
        linear_7: "f32[4, 64, 1152]" = torch._C._nn.linear(layer_norm_3, l_self_modules_blocks_modules_6_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_6_modules_qkv_parameters_bias_);  layer_norm_3 = l_self_modules_blocks_modules_6_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_6_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view_1: "f32[4, 64, 4, 3, 96]" = linear_7.view(4, 64, 4, 3, 96);  linear_7 = None
        permute_1: "f32[3, 4, 4, 64, 96]" = view_1.permute(3, 0, 2, 1, 4);  view_1 = None
        getitem_3: "f32[4, 4, 64, 96]" = permute_1[0]
        getitem_4: "f32[4, 4, 64, 96]" = permute_1[1]
        getitem_5: "f32[4, 4, 64, 96]" = permute_1[2];  permute_1 = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention_1: "f32[4, 4, 64, 96]" = torch._C._nn.scaled_dot_product_attention(getitem_3, getitem_4, getitem_5, is_causal = True);  getitem_3 = getitem_4 = getitem_5 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose_1: "f32[4, 64, 4, 96]" = scaled_dot_product_attention_1.transpose(1, 2);  scaled_dot_product_attention_1 = None
        reshape_2: "f32[4, 64, 384]" = transpose_1.reshape(4, 64, 384);  transpose_1 = None
        linear_8: "f32[4, 64, 384]" = torch._C._nn.linear(reshape_2, l_self_modules_blocks_modules_6_modules_proj_parameters_weight_, l_self_modules_blocks_modules_6_modules_proj_parameters_bias_);  reshape_2 = l_self_modules_blocks_modules_6_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_6_modules_proj_parameters_bias_ = None
        add_4: "f32[4, 64, 384]" = add_3 + linear_8;  add_3 = linear_8 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_4: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_4, (384,), l_self_modules_blocks_modules_6_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_6_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_6_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_6_modules_ln2_parameters_bias_ = None
        linear_9: "f32[4, 64, 1536]" = torch._C._nn.linear(layer_norm_4, l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_bias_);  layer_norm_4 = l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_bias_ = None
        gelu_2: "f32[4, 64, 1536]" = torch._C._nn.gelu(linear_9, approximate = 'none');  linear_9 = None
        linear_10: "f32[4, 64, 384]" = torch._C._nn.linear(gelu_2, l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_);  gelu_2 = l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_ = None
        add_5: "f32[4, 64, 384]" = add_4 + linear_10;  add_4 = linear_10 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_5: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_5, (384,), l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_ = None
        linear_11: "f32[4, 64, 1152]" = torch._C._nn.linear(layer_norm_5, l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_);  layer_norm_5 = l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view_2: "f32[4, 64, 4, 3, 96]" = linear_11.view(4, 64, 4, 3, 96);  linear_11 = None
        permute_2: "f32[3, 4, 4, 64, 96]" = view_2.permute(3, 0, 2, 1, 4);  view_2 = None
        getitem_6: "f32[4, 4, 64, 96]" = permute_2[0]
        getitem_7: "f32[4, 4, 64, 96]" = permute_2[1]
        getitem_8: "f32[4, 4, 64, 96]" = permute_2[2];  permute_2 = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention_2: "f32[4, 4, 64, 96]" = torch._C._nn.scaled_dot_product_attention(getitem_6, getitem_7, getitem_8, is_causal = True);  getitem_6 = getitem_7 = getitem_8 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose_2: "f32[4, 64, 4, 96]" = scaled_dot_product_attention_2.transpose(1, 2);  scaled_dot_product_attention_2 = None
        reshape_3: "f32[4, 64, 384]" = transpose_2.reshape(4, 64, 384);  transpose_2 = None
        linear_12: "f32[4, 64, 384]" = torch._C._nn.linear(reshape_3, l_self_modules_blocks_modules_7_modules_proj_parameters_weight_, l_self_modules_blocks_modules_7_modules_proj_parameters_bias_);  reshape_3 = l_self_modules_blocks_modules_7_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_7_modules_proj_parameters_bias_ = None
        add_6: "f32[4, 64, 384]" = add_5 + linear_12;  add_5 = linear_12 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_6: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_6, (384,), l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_ = None
        linear_13: "f32[4, 64, 1536]" = torch._C._nn.linear(layer_norm_6, l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_);  layer_norm_6 = l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_ = None
        gelu_3: "f32[4, 64, 1536]" = torch._C._nn.gelu(linear_13, approximate = 'none');  linear_13 = None
        linear_14: "f32[4, 64, 384]" = torch._C._nn.linear(gelu_3, l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_);  gelu_3 = l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_ = None
        add_7: "f32[4, 64, 384]" = add_6 + linear_14;  add_6 = linear_14 = None

        # File: /work/main/tracekit/profile/models.py:205 in torch_dynamo_resume_in_forward_at_202, code: return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1).float(), tokens.flatten())
        layer_norm_7: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(add_7, (384,), l_self_modules_ln_parameters_weight_, l_self_modules_ln_parameters_bias_, 1e-05);  add_7 = l_self_modules_ln_parameters_weight_ = l_self_modules_ln_parameters_bias_ = None
        return (layer_norm_7,)
