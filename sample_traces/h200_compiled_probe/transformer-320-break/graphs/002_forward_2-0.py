# tracekit: graph 2 (forward), compile id 2/0
# nodes 151, ops 87, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1]
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
# param: blocks.8.ln1.weight
# param: blocks.8.ln1.bias
# param: blocks.8.qkv.weight
# param: blocks.8.qkv.bias
# param: blocks.8.proj.weight
# param: blocks.8.proj.bias
# param: blocks.8.ln2.weight
# param: blocks.8.ln2.bias
# param: blocks.8.mlp.0.weight
# param: blocks.8.mlp.0.bias
# param: blocks.8.mlp.2.weight
# param: blocks.8.mlp.2.bias
# param: blocks.9.ln1.weight
# param: blocks.9.ln1.bias
# param: blocks.9.qkv.weight
# param: blocks.9.qkv.bias
# param: blocks.9.proj.weight
# param: blocks.9.proj.bias
# param: blocks.9.ln2.weight
# param: blocks.9.ln2.bias
# param: blocks.9.mlp.0.weight
# param: blocks.9.mlp.0.bias
# param: blocks.9.mlp.2.weight
# param: blocks.9.mlp.2.bias
# param: ln.weight
# param: ln.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[2, 64, 320]", l_self_modules_blocks_modules_5_modules_ln1_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_5_modules_ln1_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_5_modules_qkv_parameters_weight_: "f32[960, 320]", l_self_modules_blocks_modules_5_modules_qkv_parameters_bias_: "f32[960]", l_self_modules_blocks_modules_5_modules_proj_parameters_weight_: "f32[320, 320]", l_self_modules_blocks_modules_5_modules_proj_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_5_modules_ln2_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_5_modules_ln2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_: "f32[1280, 320]", l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_: "f32[1280]", l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_: "f32[320, 1280]", l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_6_modules_qkv_parameters_weight_: "f32[960, 320]", l_self_modules_blocks_modules_6_modules_qkv_parameters_bias_: "f32[960]", l_self_modules_blocks_modules_6_modules_proj_parameters_weight_: "f32[320, 320]", l_self_modules_blocks_modules_6_modules_proj_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_6_modules_ln2_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_6_modules_ln2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_weight_: "f32[1280, 320]", l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_bias_: "f32[1280]", l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_: "f32[320, 1280]", l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_: "f32[960, 320]", l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_: "f32[960]", l_self_modules_blocks_modules_7_modules_proj_parameters_weight_: "f32[320, 320]", l_self_modules_blocks_modules_7_modules_proj_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_: "f32[1280, 320]", l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_: "f32[1280]", l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_: "f32[320, 1280]", l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_8_modules_ln1_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_8_modules_ln1_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_8_modules_qkv_parameters_weight_: "f32[960, 320]", l_self_modules_blocks_modules_8_modules_qkv_parameters_bias_: "f32[960]", l_self_modules_blocks_modules_8_modules_proj_parameters_weight_: "f32[320, 320]", l_self_modules_blocks_modules_8_modules_proj_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_8_modules_ln2_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_8_modules_ln2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_8_modules_mlp_modules_0_parameters_weight_: "f32[1280, 320]", l_self_modules_blocks_modules_8_modules_mlp_modules_0_parameters_bias_: "f32[1280]", l_self_modules_blocks_modules_8_modules_mlp_modules_2_parameters_weight_: "f32[320, 1280]", l_self_modules_blocks_modules_8_modules_mlp_modules_2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_9_modules_ln1_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_9_modules_ln1_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_9_modules_qkv_parameters_weight_: "f32[960, 320]", l_self_modules_blocks_modules_9_modules_qkv_parameters_bias_: "f32[960]", l_self_modules_blocks_modules_9_modules_proj_parameters_weight_: "f32[320, 320]", l_self_modules_blocks_modules_9_modules_proj_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_9_modules_ln2_parameters_weight_: "f32[320]", l_self_modules_blocks_modules_9_modules_ln2_parameters_bias_: "f32[320]", l_self_modules_blocks_modules_9_modules_mlp_modules_0_parameters_weight_: "f32[1280, 320]", l_self_modules_blocks_modules_9_modules_mlp_modules_0_parameters_bias_: "f32[1280]", l_self_modules_blocks_modules_9_modules_mlp_modules_2_parameters_weight_: "f32[320, 1280]", l_self_modules_blocks_modules_9_modules_mlp_modules_2_parameters_bias_: "f32[320]", l_self_modules_ln_parameters_weight_: "f32[320]", l_self_modules_ln_parameters_bias_: "f32[320]"):
        # File: /work/main/tracekit/profile/models.py:203 in torch_dynamo_resume_in_forward_at_202, code: for blk in self.blocks[cut:]:
        _log_api_usage_once = torch._C._log_api_usage_once('python.nn_module');  _log_api_usage_once = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(l_x_, (320,), l_self_modules_blocks_modules_5_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_5_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_5_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_5_modules_ln1_parameters_bias_ = None
        linear: "f32[2, 64, 960]" = torch._C._nn.linear(layer_norm, l_self_modules_blocks_modules_5_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_5_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_blocks_modules_5_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_5_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view: "f32[2, 64, 4, 3, 80]" = linear.view(2, 64, 4, 3, 80);  linear = None
        permute: "f32[3, 2, 4, 64, 80]" = view.permute(3, 0, 2, 1, 4);  view = None
        getitem: "f32[2, 4, 64, 80]" = permute[0]
        getitem_1: "f32[2, 4, 64, 80]" = permute[1]
        getitem_2: "f32[2, 4, 64, 80]" = permute[2];  permute = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention: "f32[2, 4, 64, 80]" = torch._C._nn.scaled_dot_product_attention(getitem, getitem_1, getitem_2, is_causal = True);  getitem = getitem_1 = getitem_2 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose: "f32[2, 64, 4, 80]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        reshape: "f32[2, 64, 320]" = transpose.reshape(2, 64, 320);  transpose = None
        linear_1: "f32[2, 64, 320]" = torch._C._nn.linear(reshape, l_self_modules_blocks_modules_5_modules_proj_parameters_weight_, l_self_modules_blocks_modules_5_modules_proj_parameters_bias_);  reshape = l_self_modules_blocks_modules_5_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_5_modules_proj_parameters_bias_ = None
        add: "f32[2, 64, 320]" = l_x_ + linear_1;  l_x_ = linear_1 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_1: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add, (320,), l_self_modules_blocks_modules_5_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_5_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_5_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_5_modules_ln2_parameters_bias_ = None
        linear_2: "f32[2, 64, 1280]" = torch._C._nn.linear(layer_norm_1, l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_);  layer_norm_1 = l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_5_modules_mlp_modules_0_parameters_bias_ = None
        gelu: "f32[2, 64, 1280]" = torch._C._nn.gelu(linear_2, approximate = 'none');  linear_2 = None
        linear_3: "f32[2, 64, 320]" = torch._C._nn.linear(gelu, l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_);  gelu = l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_5_modules_mlp_modules_2_parameters_bias_ = None
        add_1: "f32[2, 64, 320]" = add + linear_3;  add = linear_3 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_2: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_1, (320,), l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_6_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_6_modules_ln1_parameters_bias_ = None
        linear_4: "f32[2, 64, 960]" = torch._C._nn.linear(layer_norm_2, l_self_modules_blocks_modules_6_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_6_modules_qkv_parameters_bias_);  layer_norm_2 = l_self_modules_blocks_modules_6_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_6_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view_1: "f32[2, 64, 4, 3, 80]" = linear_4.view(2, 64, 4, 3, 80);  linear_4 = None
        permute_1: "f32[3, 2, 4, 64, 80]" = view_1.permute(3, 0, 2, 1, 4);  view_1 = None
        getitem_3: "f32[2, 4, 64, 80]" = permute_1[0]
        getitem_4: "f32[2, 4, 64, 80]" = permute_1[1]
        getitem_5: "f32[2, 4, 64, 80]" = permute_1[2];  permute_1 = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention_1: "f32[2, 4, 64, 80]" = torch._C._nn.scaled_dot_product_attention(getitem_3, getitem_4, getitem_5, is_causal = True);  getitem_3 = getitem_4 = getitem_5 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose_1: "f32[2, 64, 4, 80]" = scaled_dot_product_attention_1.transpose(1, 2);  scaled_dot_product_attention_1 = None
        reshape_1: "f32[2, 64, 320]" = transpose_1.reshape(2, 64, 320);  transpose_1 = None
        linear_5: "f32[2, 64, 320]" = torch._C._nn.linear(reshape_1, l_self_modules_blocks_modules_6_modules_proj_parameters_weight_, l_self_modules_blocks_modules_6_modules_proj_parameters_bias_);  reshape_1 = l_self_modules_blocks_modules_6_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_6_modules_proj_parameters_bias_ = None
        add_2: "f32[2, 64, 320]" = add_1 + linear_5;  add_1 = linear_5 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_3: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_2, (320,), l_self_modules_blocks_modules_6_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_6_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_6_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_6_modules_ln2_parameters_bias_ = None
        linear_6: "f32[2, 64, 1280]" = torch._C._nn.linear(layer_norm_3, l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_bias_);  layer_norm_3 = l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_6_modules_mlp_modules_0_parameters_bias_ = None
        gelu_1: "f32[2, 64, 1280]" = torch._C._nn.gelu(linear_6, approximate = 'none');  linear_6 = None
        linear_7: "f32[2, 64, 320]" = torch._C._nn.linear(gelu_1, l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_);  gelu_1 = l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_6_modules_mlp_modules_2_parameters_bias_ = None
        add_3: "f32[2, 64, 320]" = add_2 + linear_7;  add_2 = linear_7 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_4: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_3, (320,), l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_7_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_7_modules_ln1_parameters_bias_ = None
        linear_8: "f32[2, 64, 960]" = torch._C._nn.linear(layer_norm_4, l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_);  layer_norm_4 = l_self_modules_blocks_modules_7_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_7_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view_2: "f32[2, 64, 4, 3, 80]" = linear_8.view(2, 64, 4, 3, 80);  linear_8 = None
        permute_2: "f32[3, 2, 4, 64, 80]" = view_2.permute(3, 0, 2, 1, 4);  view_2 = None
        getitem_6: "f32[2, 4, 64, 80]" = permute_2[0]
        getitem_7: "f32[2, 4, 64, 80]" = permute_2[1]
        getitem_8: "f32[2, 4, 64, 80]" = permute_2[2];  permute_2 = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention_2: "f32[2, 4, 64, 80]" = torch._C._nn.scaled_dot_product_attention(getitem_6, getitem_7, getitem_8, is_causal = True);  getitem_6 = getitem_7 = getitem_8 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose_2: "f32[2, 64, 4, 80]" = scaled_dot_product_attention_2.transpose(1, 2);  scaled_dot_product_attention_2 = None
        reshape_2: "f32[2, 64, 320]" = transpose_2.reshape(2, 64, 320);  transpose_2 = None
        linear_9: "f32[2, 64, 320]" = torch._C._nn.linear(reshape_2, l_self_modules_blocks_modules_7_modules_proj_parameters_weight_, l_self_modules_blocks_modules_7_modules_proj_parameters_bias_);  reshape_2 = l_self_modules_blocks_modules_7_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_7_modules_proj_parameters_bias_ = None
        add_4: "f32[2, 64, 320]" = add_3 + linear_9;  add_3 = linear_9 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_5: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_4, (320,), l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_7_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_7_modules_ln2_parameters_bias_ = None
        linear_10: "f32[2, 64, 1280]" = torch._C._nn.linear(layer_norm_5, l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_);  layer_norm_5 = l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_ = None
        gelu_2: "f32[2, 64, 1280]" = torch._C._nn.gelu(linear_10, approximate = 'none');  linear_10 = None
        linear_11: "f32[2, 64, 320]" = torch._C._nn.linear(gelu_2, l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_);  gelu_2 = l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_ = None
        add_5: "f32[2, 64, 320]" = add_4 + linear_11;  add_4 = linear_11 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_6: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_5, (320,), l_self_modules_blocks_modules_8_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_8_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_8_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_8_modules_ln1_parameters_bias_ = None
        linear_12: "f32[2, 64, 960]" = torch._C._nn.linear(layer_norm_6, l_self_modules_blocks_modules_8_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_8_modules_qkv_parameters_bias_);  layer_norm_6 = l_self_modules_blocks_modules_8_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_8_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view_3: "f32[2, 64, 4, 3, 80]" = linear_12.view(2, 64, 4, 3, 80);  linear_12 = None
        permute_3: "f32[3, 2, 4, 64, 80]" = view_3.permute(3, 0, 2, 1, 4);  view_3 = None
        getitem_9: "f32[2, 4, 64, 80]" = permute_3[0]
        getitem_10: "f32[2, 4, 64, 80]" = permute_3[1]
        getitem_11: "f32[2, 4, 64, 80]" = permute_3[2];  permute_3 = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention_3: "f32[2, 4, 64, 80]" = torch._C._nn.scaled_dot_product_attention(getitem_9, getitem_10, getitem_11, is_causal = True);  getitem_9 = getitem_10 = getitem_11 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose_3: "f32[2, 64, 4, 80]" = scaled_dot_product_attention_3.transpose(1, 2);  scaled_dot_product_attention_3 = None
        reshape_3: "f32[2, 64, 320]" = transpose_3.reshape(2, 64, 320);  transpose_3 = None
        linear_13: "f32[2, 64, 320]" = torch._C._nn.linear(reshape_3, l_self_modules_blocks_modules_8_modules_proj_parameters_weight_, l_self_modules_blocks_modules_8_modules_proj_parameters_bias_);  reshape_3 = l_self_modules_blocks_modules_8_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_8_modules_proj_parameters_bias_ = None
        add_6: "f32[2, 64, 320]" = add_5 + linear_13;  add_5 = linear_13 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_7: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_6, (320,), l_self_modules_blocks_modules_8_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_8_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_8_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_8_modules_ln2_parameters_bias_ = None
        linear_14: "f32[2, 64, 1280]" = torch._C._nn.linear(layer_norm_7, l_self_modules_blocks_modules_8_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_8_modules_mlp_modules_0_parameters_bias_);  layer_norm_7 = l_self_modules_blocks_modules_8_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_8_modules_mlp_modules_0_parameters_bias_ = None
        gelu_3: "f32[2, 64, 1280]" = torch._C._nn.gelu(linear_14, approximate = 'none');  linear_14 = None
        linear_15: "f32[2, 64, 320]" = torch._C._nn.linear(gelu_3, l_self_modules_blocks_modules_8_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_8_modules_mlp_modules_2_parameters_bias_);  gelu_3 = l_self_modules_blocks_modules_8_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_8_modules_mlp_modules_2_parameters_bias_ = None
        add_7: "f32[2, 64, 320]" = add_6 + linear_15;  add_6 = linear_15 = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm_8: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_7, (320,), l_self_modules_blocks_modules_9_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_9_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_9_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_9_modules_ln1_parameters_bias_ = None
        linear_16: "f32[2, 64, 960]" = torch._C._nn.linear(layer_norm_8, l_self_modules_blocks_modules_9_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_9_modules_qkv_parameters_bias_);  layer_norm_8 = l_self_modules_blocks_modules_9_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_9_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view_4: "f32[2, 64, 4, 3, 80]" = linear_16.view(2, 64, 4, 3, 80);  linear_16 = None
        permute_4: "f32[3, 2, 4, 64, 80]" = view_4.permute(3, 0, 2, 1, 4);  view_4 = None
        getitem_12: "f32[2, 4, 64, 80]" = permute_4[0]
        getitem_13: "f32[2, 4, 64, 80]" = permute_4[1]
        getitem_14: "f32[2, 4, 64, 80]" = permute_4[2];  permute_4 = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention_4: "f32[2, 4, 64, 80]" = torch._C._nn.scaled_dot_product_attention(getitem_12, getitem_13, getitem_14, is_causal = True);  getitem_12 = getitem_13 = getitem_14 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose_4: "f32[2, 64, 4, 80]" = scaled_dot_product_attention_4.transpose(1, 2);  scaled_dot_product_attention_4 = None
        reshape_4: "f32[2, 64, 320]" = transpose_4.reshape(2, 64, 320);  transpose_4 = None
        linear_17: "f32[2, 64, 320]" = torch._C._nn.linear(reshape_4, l_self_modules_blocks_modules_9_modules_proj_parameters_weight_, l_self_modules_blocks_modules_9_modules_proj_parameters_bias_);  reshape_4 = l_self_modules_blocks_modules_9_modules_proj_parameters_weight_ = l_self_modules_blocks_modules_9_modules_proj_parameters_bias_ = None
        add_8: "f32[2, 64, 320]" = add_7 + linear_17;  add_7 = linear_17 = None

        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        layer_norm_9: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_8, (320,), l_self_modules_blocks_modules_9_modules_ln2_parameters_weight_, l_self_modules_blocks_modules_9_modules_ln2_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_9_modules_ln2_parameters_weight_ = l_self_modules_blocks_modules_9_modules_ln2_parameters_bias_ = None
        linear_18: "f32[2, 64, 1280]" = torch._C._nn.linear(layer_norm_9, l_self_modules_blocks_modules_9_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_9_modules_mlp_modules_0_parameters_bias_);  layer_norm_9 = l_self_modules_blocks_modules_9_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_9_modules_mlp_modules_0_parameters_bias_ = None
        gelu_4: "f32[2, 64, 1280]" = torch._C._nn.gelu(linear_18, approximate = 'none');  linear_18 = None
        linear_19: "f32[2, 64, 320]" = torch._C._nn.linear(gelu_4, l_self_modules_blocks_modules_9_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_9_modules_mlp_modules_2_parameters_bias_);  gelu_4 = l_self_modules_blocks_modules_9_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_9_modules_mlp_modules_2_parameters_bias_ = None
        add_9: "f32[2, 64, 320]" = add_8 + linear_19;  add_8 = linear_19 = None

        # File: /work/main/tracekit/profile/models.py:205 in torch_dynamo_resume_in_forward_at_202, code: return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1).float(), tokens.flatten())
        layer_norm_10: "f32[2, 64, 320]" = torch.nn.functional.layer_norm(add_9, (320,), l_self_modules_ln_parameters_weight_, l_self_modules_ln_parameters_bias_, 1e-05);  add_9 = l_self_modules_ln_parameters_weight_ = l_self_modules_ln_parameters_bias_ = None
        return (layer_norm_10,)
