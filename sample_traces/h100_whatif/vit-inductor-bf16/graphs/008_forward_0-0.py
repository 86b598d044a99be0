# tracekit: graph 8 (forward), compile id 0/0
# nodes 29, ops 14, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [5]
# param: encoder.layers.encoder_layer_7.self_attention.in_proj_weight
# param: encoder.layers.encoder_layer_7.self_attention.in_proj_bias
# param: encoder.layers.encoder_layer_7.self_attention.out_proj.weight
# param: encoder.layers.encoder_layer_7.self_attention.out_proj.bias
# param: encoder.layers.encoder_layer_7.ln_2.weight
# param: encoder.layers.encoder_layer_7.ln_2.bias
# param: encoder.layers.encoder_layer_7.mlp.0.weight
# param: encoder.layers.encoder_layer_7.mlp.0.bias
# param: encoder.layers.encoder_layer_7.mlp.3.weight
# param: encoder.layers.encoder_layer_7.mlp.3.bias
# param: encoder.layers.encoder_layer_8.ln_1.weight
# param: encoder.layers.encoder_layer_8.ln_1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, query_7: "f32[197, 32, 768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_parameters_in_proj_weight_: "f32[2304, 768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_parameters_in_proj_bias_: "f32[2304]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_modules_out_proj_parameters_weight_: "f32[768, 768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_modules_out_proj_parameters_bias_: "f32[768]", input_43: "f32[32, 197, 768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_ln_2_parameters_weight_: "f32[768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_ln_2_parameters_bias_: "f32[768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_0_parameters_weight_: "f32[3072, 768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_0_parameters_bias_: "f32[3072]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_3_parameters_weight_: "f32[768, 3072]", l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_3_parameters_bias_: "f32[768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_8_modules_ln_1_parameters_weight_: "f32[768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_8_modules_ln_1_parameters_bias_: "f32[768]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:113 in forward, code: x, _ = self.self_attention(x, x, x, need_weights=False)
        multi_head_attention_forward = torch.nn.functional.multi_head_attention_forward(query_7, query_7, query_7, 768, 12, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_parameters_in_proj_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_parameters_in_proj_bias_, None, None, False, 0.0, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_modules_out_proj_parameters_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_modules_out_proj_parameters_bias_, training = True, key_padding_mask = None, need_weights = False, attn_mask = None, average_attn_weights = True, is_causal = False);  query_7 = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_parameters_in_proj_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_parameters_in_proj_bias_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_modules_out_proj_parameters_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_self_attention_modules_out_proj_parameters_bias_ = None
        getitem: "bf16[197, 32, 768]" = multi_head_attention_forward[0];  multi_head_attention_forward = None
        transpose: "bf16[32, 197, 768]" = getitem.transpose(1, 0);  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:114 in forward, code: x = self.dropout(x)
        dropout: "bf16[32, 197, 768]" = torch.nn.functional.dropout(transpose, 0.0, True, False);  transpose = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:115 in forward, code: x = x + input
        add: "f32[32, 197, 768]" = dropout + input_43;  dropout = input_43 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:117 in forward, code: y = self.ln_2(x)
        layer_norm: "f32[32, 197, 768]" = torch.nn.functional.layer_norm(add, (768,), l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_ln_2_parameters_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_ln_2_parameters_bias_, 1e-06);  l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_ln_2_parameters_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_ln_2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:118 in forward, code: y = self.mlp(y)
        linear: "bf16[32, 197, 3072]" = torch._C._nn.linear(layer_norm, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_0_parameters_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_0_parameters_bias_);  layer_norm = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_0_parameters_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_0_parameters_bias_ = None
        gelu: "bf16[32, 197, 3072]" = torch._C._nn.gelu(linear, approximate = 'none');  linear = None
        dropout_1: "bf16[32, 197, 3072]" = torch.nn.functional.dropout(gelu, 0.0, True, False);  gelu = None
        linear_1: "bf16[32, 197, 768]" = torch._C._nn.linear(dropout_1, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_3_parameters_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_3_parameters_bias_);  dropout_1 = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_3_parameters_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_7_modules_mlp_modules_3_parameters_bias_ = None
        dropout_2: "bf16[32, 197, 768]" = torch.nn.functional.dropout(linear_1, 0.0, True, False);  linear_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:119 in forward, code: return x + y
        add_1: "f32[32, 197, 768]" = add + dropout_2;  add = dropout_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:112 in forward, code: x = self.ln_1(input)
        layer_norm_1: "f32[32, 197, 768]" = torch.nn.functional.layer_norm(add_1, (768,), l_self_modules_encoder_modules_layers_modules_encoder_layer_8_modules_ln_1_parameters_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_8_modules_ln_1_parameters_bias_, 1e-06);  l_self_modules_encoder_modules_layers_modules_encoder_layer_8_modules_ln_1_parameters_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_8_modules_ln_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:113 in forward, code: x, _ = self.self_attention(x, x, x, need_weights=False)
        transpose_1: "f32[197, 32, 768]" = layer_norm_1.transpose(1, 0);  layer_norm_1 = None
        return (transpose_1, add_1)
