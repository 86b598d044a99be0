# tracekit: graph 0 (forward), compile id 1/0
# nodes 27, ops 21, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [12, 13]
# param: transformer.wte.weight
# param: transformer.wpe.weight
# param: transformer.h.0.ln_1.weight
# param: transformer.h.0.ln_1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_input_ids_: "i64[8, 512]", l_self_modules_transformer_modules_wte_parameters_weight_: "f32[50257, 768]", l_self_modules_transformer_modules_wpe_parameters_weight_: "f32[1024, 768]", l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_weight_: "f32[768]", l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_bias_: "f32[768]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:549 in forward, code: input_ids = input_ids.view(-1, input_shape[-1])
        view: "i64[8, 512]" = l_input_ids_.view(-1, 512);  l_input_ids_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:569 in forward, code: inputs_embeds = self.wte(input_ids)
        embedding: "f32[8, 512, 768]" = torch.nn.functional.embedding(view, l_self_modules_transformer_modules_wte_parameters_weight_, None, None, 2.0, False, False);  view = l_self_modules_transformer_modules_wte_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:573 in forward, code: position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past_seen_tokens
        arange: "i64[512]" = torch.arange(512, device = device(type='cuda', index=0))
        add: "i64[512]" = arange + 0;  arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:574 in forward, code: position_ids = position_ids.unsqueeze(0)
        unsqueeze: "i64[1, 512]" = add.unsqueeze(0);  add = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:576 in forward, code: position_embeds = self.wpe(position_ids)
        embedding_1: "f32[1, 512, 768]" = torch.nn.functional.embedding(unsqueeze, l_self_modules_transformer_modules_wpe_parameters_weight_, None, None, 2.0, False, False);  unsqueeze = l_self_modules_transformer_modules_wpe_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:577 in forward, code: hidden_states = inputs_embeds + position_embeds.to(inputs_embeds.device)
        to: "f32[1, 512, 768]" = embedding_1.to(device(type='cuda', index=0));  embedding_1 = None
        add_1: "f32[8, 512, 768]" = embedding + to;  embedding = to = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:508 in sdpa_mask, code: batch_arange = torch.arange(batch_size, device=device)
        arange_1: "i64[8]" = torch.arange(8, device = device(type='cuda', index=0));  arange_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:509 in sdpa_mask, code: head_arange = torch.arange(1, device=device)
        arange_2: "i64[1]" = torch.arange(1, device = device(type='cuda', index=0));  arange_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:510 in sdpa_mask, code: q_arange = torch.arange(q_length, device=device) + q_offset
        arange_3: "i64[512]" = torch.arange(512, device = device(type='cuda', index=0))
        add_2: "i64[512]" = arange_3 + 0;  arange_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:511 in sdpa_mask, code: kv_arange = torch.arange(kv_length, device=device) + kv_offset
        arange_4: "i64[512]" = torch.arange(512, device = device(type='cuda', index=0))
        add_3: "i64[512]" = arange_4 + 0;  arange_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:367 in _non_vmap_expansion_sdpa, code: q_indices = q_indices[None, None, :, None]
        getitem: "i64[1, 1, 512, 1]" = add_2[(None, None, slice(None, None, None), None)];  add_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:368 in _non_vmap_expansion_sdpa, code: kv_indices = kv_indices[None, None, None, :]
        getitem_1: "i64[1, 1, 1, 512]" = add_3[(None, None, None, slice(None, None, None))];  add_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:81 in causal_mask_function, code: return kv_idx <= q_idx
        le: "b8[1, 1, 512, 512]" = getitem_1 <= getitem;  getitem_1 = getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:519 in sdpa_mask, code: attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)
        expand: "b8[8, 1, 512, 512]" = le.expand(8, -1, 512, 512);  le = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:603 in forward, code: hidden_states = self.drop(hidden_states)
        dropout: "f32[8, 512, 768]" = torch.nn.functional.dropout(add_1, 0.1, True, False);  add_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:273 in forward, code: hidden_states = self.ln_1(hidden_states)
        layer_norm: "f32[8, 512, 768]" = torch.nn.functional.layer_norm(dropout, (768,), l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_weight_, l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_bias_, 1e-05);  l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_weight_ = l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/pytorch_utils.py:119 in forward, code: x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        view_1: "f32[4096, 768]" = layer_norm.view(-1, 768);  layer_norm = None
        return (view_1, expand, dropout)
