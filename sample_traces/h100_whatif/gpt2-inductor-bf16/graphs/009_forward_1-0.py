# tracekit: graph 9 (forward), compile id 1/0
# nodes 61, ops 45, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [3, 4]
# param: transformer.h.8.attn.c_attn.bias
# param: transformer.h.8.attn.c_attn.weight
# param: transformer.h.8.attn.c_proj.bias
# param: transformer.h.8.attn.c_proj.weight
# param: transformer.h.8.ln_2.weight
# param: transformer.h.8.ln_2.bias
# param: transformer.h.8.mlp.c_fc.bias
# param: transformer.h.8.mlp.c_fc.weight
# param: transformer.h.8.mlp.c_proj.bias
# param: transformer.h.8.mlp.c_proj.weight
# param: transformer.h.9.ln_1.weight
# param: transformer.h.9.ln_1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_attn_parameters_bias_: "f32[2304]", view_89: "f32[4096, 768]", l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_attn_parameters_weight_: "f32[768, 2304]", attention_mask_1: "b8[8, 1, 512, 512]", l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_proj_parameters_bias_: "f32[768]", l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_proj_parameters_weight_: "f32[768, 768]", hidden_states_49: "f32[8, 512, 768]", l_self_modules_transformer_modules_h_modules_8_modules_ln_2_parameters_weight_: "f32[768]", l_self_modules_transformer_modules_h_modules_8_modules_ln_2_parameters_bias_: "f32[768]", l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_fc_parameters_bias_: "f32[3072]", l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_fc_parameters_weight_: "f32[768, 3072]", l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_proj_parameters_bias_: "f32[768]", l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_proj_parameters_weight_: "f32[3072, 768]", l_self_modules_transformer_modules_h_modules_9_modules_ln_1_parameters_weight_: "f32[768]", l_self_modules_transformer_modules_h_modules_9_modules_ln_1_parameters_bias_: "f32[768]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:119 in forward, code: x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        addmm: "bf16[4096, 2304]" = torch.addmm(l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_attn_parameters_bias_, view_89, l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_attn_parameters_weight_);  l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_attn_parameters_bias_ = view_89 = l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_attn_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:120 in forward, code: x = x.view(size_out)
        view: "bf16[8, 512, 2304]" = addmm.view((8, 512, 2304));  addmm = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:185 in forward, code: query_states, key_states, value_states = self.c_attn(hidden_states).split(self.split_size, dim=2)
        split = view.split(768, dim = 2);  view = None
        getitem: "bf16[8, 512, 768]" = split[0]
        getitem_1: "bf16[8, 512, 768]" = split[1]
        getitem_2: "bf16[8, 512, 768]" = split[2];  split = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:187 in forward, code: key_states = key_states.view(shape_kv).transpose(1, 2)
        view_90: "bf16[8, 512, 12, 64]" = getitem_1.view((8, 512, -1, 64));  getitem_1 = None
        transpose: "bf16[8, 12, 512, 64]" = view_90.transpose(1, 2);  view_90 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:188 in forward, code: value_states = value_states.view(shape_kv).transpose(1, 2)
        view_91: "bf16[8, 512, 12, 64]" = getitem_2.view((8, 512, -1, 64));  getitem_2 = None
        transpose_1: "bf16[8, 12, 512, 64]" = view_91.transpose(1, 2);  view_91 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:191 in forward, code: query_states = query_states.view(shape_q).transpose(1, 2)
        view_92: "bf16[8, 512, 12, 64]" = getitem.view((8, 512, -1, 64));  getitem = None
        transpose_2: "bf16[8, 12, 512, 64]" = view_92.transpose(1, 2);  view_92 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/cache_utils.py:125 in lazy_initialization, code: self.keys = torch.tensor([], dtype=self.dtype, device=self.device)
        tensor: "bf16[0]" = torch.tensor([], dtype = torch.bfloat16, device = device(type='cuda', index=0))

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/cache_utils.py:126 in lazy_initialization, code: self.values = torch.tensor([], dtype=self.dtype, device=self.device)
        tensor_1: "bf16[0]" = torch.tensor([], dtype = torch.bfloat16, device = device(type='cuda', index=0))

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/cache_utils.py:146 in update, code: self.keys = torch.cat([self.keys, key_states], dim=-2)
        cat: "bf16[8, 12, 512, 64]" = torch.cat([tensor, transpose], dim = -2);  tensor = transpose = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/cache_utils.py:147 in update, code: self.values = torch.cat([self.values, value_states], dim=-2)
        cat_1: "bf16[8, 12, 512, 64]" = torch.cat([tensor_1, transpose_1], dim = -2);  tensor_1 = transpose_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:158 in sdpa_attention_forward, code: attn_output = torch.nn.functional.scaled_dot_product_attention(
        scaled_dot_product_attention: "bf16[8, 12, 512, 64]" = torch._C._nn.scaled_dot_product_attention(transpose_2, cat, cat_1, attn_mask = attention_mask_1, dropout_p = 0.1, scale = 0.125, is_causal = False);  transpose_2 = attention_mask_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/sdpa_attention.py:168 in sdpa_attention_forward, code: attn_output = attn_output.transpose(1, 2).contiguous()
        transpose_3: "bf16[8, 512, 12, 64]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        contiguous: "bf16[8, 512, 12, 64]" = transpose_3.contiguous();  transpose_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:222 in forward, code: attn_output = attn_output.reshape(*attn_output.shape[:-2], -1).contiguous()
        reshape: "bf16[8, 512, 768]" = contiguous.reshape(8, 512, -1);  contiguous = None
        contiguous_1: "bf16[8, 512, 768]" = reshape.contiguous();  reshape = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:119 in forward, code: x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        view_93: "bf16[4096, 768]" = contiguous_1.view(-1, 768);  contiguous_1 = None
        addmm_1: "bf16[4096, 768]" = torch.addmm(l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_proj_parameters_bias_, view_93, l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_proj_parameters_weight_);  l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_proj_parameters_bias_ = view_93 = l_self_modules_transformer_modules_h_modules_8_modules_attn_modules_c_proj_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:120 in forward, code: x = x.view(size_out)
        view_94: "bf16[8, 512, 768]" = addmm_1.view((8, 512, 768));  addmm_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:224 in forward, code: attn_output = self.resid_dropout(attn_output)
        dropout: "bf16[8, 512, 768]" = torch.nn.functional.dropout(view_94, 0.1, True, False);  view_94 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:282 in forward, code: hidden_states = attn_output + residual
        add: "f32[8, 512, 768]" = dropout + hidden_states_49;  dropout = hidden_states_49 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:304 in forward, code: hidden_states = self.ln_2(hidden_states)
        layer_norm: "f32[8, 512, 768]" = torch.nn.functional.layer_norm(add, (768,), l_self_modules_transformer_modules_h_modules_8_modules_ln_2_parameters_weight_, l_self_modules_transformer_modules_h_modules_8_modules_ln_2_parameters_bias_, 1e-05);  l_self_modules_transformer_modules_h_modules_8_modules_ln_2_parameters_weight_ = l_self_modules_transformer_modules_h_modules_8_modules_ln_2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:119 in forward, code: x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        view_95: "f32[4096, 768]" = layer_norm.view(-1, 768);  layer_norm = None
        addmm_2: "bf16[4096, 3072]" = torch.addmm(l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_fc_parameters_bias_, view_95, l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_fc_parameters_weight_);  l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_fc_parameters_bias_ = view_95 = l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_fc_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:120 in forward, code: x = x.view(size_out)
        view_96: "bf16[8, 512, 3072]" = addmm_2.view((8, 512, 3072));  addmm_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/activations.py:66 in forward, code: return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))
        mul: "bf16[8, 512, 3072]" = 0.5 * view_96
        pow_1: "f32[8, 512, 3072]" = torch.pow(view_96, 3.0)
        mul_1: "f32[8, 512, 3072]" = 0.044715 * pow_1;  pow_1 = None
        add_1: "f32[8, 512, 3072]" = view_96 + mul_1;  view_96 = mul_1 = None
        mul_2: "f32[8, 512, 3072]" = 0.7978845608028654 * add_1;  add_1 = None
        tanh: "f32[8, 512, 3072]" = torch.tanh(mul_2);  mul_2 = None
        add_2: "f32[8, 512, 3072]" = 1.0 + tanh;  tanh = None
        mul_3: "f32[8, 512, 3072]" = mul * add_2;  mul = add_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:119 in forward, code: x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        view_97: "f32[4096, 3072]" = mul_3.view(-1, 3072);  mul_3 = None
        addmm_3: "bf16[4096, 768]" = torch.addmm(l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_proj_parameters_bias_, view_97, l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_proj_parameters_weight_);  l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_proj_parameters_bias_ = view_97 = l_self_modules_transformer_modules_h_modules_8_modules_mlp_modules_c_proj_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:120 in forward, code: x = x.view(size_out)
        view_98: "bf16[8, 512, 768]" = addmm_3.view((8, 512, 768));  addmm_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:242 in forward, code: hidden_states = self.dropout(hidden_states)
        dropout_1: "bf16[8, 512, 768]" = torch.nn.functional.dropout(view_98, 0.1, True, False);  view_98 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:307 in forward, code: hidden_states = residual + feed_forward_hidden_states
        add_3: "f32[8, 512, 768]" = add + dropout_1;  add = dropout_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:273 in forward, code: hidden_states = self.ln_1(hidden_states)
        layer_norm_1: "f32[8, 512, 768]" = torch.nn.functional.layer_norm(add_3, (768,), l_self_modules_transformer_modules_h_modules_9_modules_ln_1_parameters_weight_, l_self_modules_transformer_modules_h_modules_9_modules_ln_1_parameters_bias_, 1e-05);  l_self_modules_transformer_modules_h_modules_9_modules_ln_1_parameters_weight_ = l_self_modules_transformer_modules_h_modules_9_modules_ln_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:119 in forward, code: x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        view_99: "f32[4096, 768]" = layer_norm_1.view(-1, 768);  layer_norm_1 = None
        return (view_99, add_3, cat_1, cat)
