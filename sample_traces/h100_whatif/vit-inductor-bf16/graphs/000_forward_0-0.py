# tracekit: graph 0 (forward), compile id 0/0
# nodes 17, ops 9, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [13]
# param: conv_proj.weight
# param: conv_proj.bias
# param: class_token
# param: encoder.pos_embedding
# param: encoder.layers.encoder_layer_0.ln_1.weight
# param: encoder.layers.encoder_layer_0.ln_1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[32, 3, 224, 224]", l_self_modules_conv_proj_parameters_weight_: "f32[768, 3, 16, 16]", l_self_modules_conv_proj_parameters_bias_: "f32[768]", l_self_parameters_class_token_: "f32[1, 1, 768]", l_self_modules_encoder_parameters_pos_embedding_: "f32[1, 197, 768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_0_modules_ln_1_parameters_weight_: "f32[768]", l_self_modules_encoder_modules_layers_modules_encoder_layer_0_modules_ln_1_parameters_bias_: "f32[768]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:277 in _process_input, code: x = self.conv_proj(x)
        conv2d: "bf16[32, 768, 14, 14]" = torch.conv2d(l_x_, l_self_modules_conv_proj_parameters_weight_, l_self_modules_conv_proj_parameters_bias_, (16, 16), (0, 0), (1, 1), 1);  l_x_ = l_self_modules_conv_proj_parameters_weight_ = l_self_modules_conv_proj_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:279 in _process_input, code: x = x.reshape(n, self.hidden_dim, n_h * n_w)
        reshape: "bf16[32, 768, 196]" = conv2d.reshape(32, 768, 196);  conv2d = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:285 in _process_input, code: x = x.permute(0, 2, 1)
        permute: "bf16[32, 196, 768]" = reshape.permute(0, 2, 1);  reshape = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:295 in forward, code: batch_class_token = self.class_token.expand(n, -1, -1)
        expand: "f32[32, 1, 768]" = l_self_parameters_class_token_.expand(32, -1, -1);  l_self_parameters_class_token_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:296 in forward, code: x = torch.cat([batch_class_token, x], dim=1)
        cat: "f32[32, 197, 768]" = torch.cat([expand, permute], dim = 1);  expand = permute = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:156 in forward, code: input = input + self.pos_embedding
        add: "f32[32, 197, 768]" = cat + l_self_modules_encoder_parameters_pos_embedding_;  cat = l_self_modules_encoder_parameters_pos_embedding_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:157 in forward, code: return self.ln(self.layers(self.dropout(input)))
        dropout: "f32[32, 197, 768]" = torch.nn.functional.dropout(add, 0.0, True, False);  add = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:112 in forward, code: x = self.ln_1(input)
        layer_norm: "f32[32, 197, 768]" = torch.nn.functional.layer_norm(dropout, (768,), l_self_modules_encoder_modules_layers_modules_encoder_layer_0_modules_ln_1_parameters_weight_, l_self_modules_encoder_modules_layers_modules_encoder_layer_0_modules_ln_1_parameters_bias_, 1e-06);  l_self_modules_encoder_modules_layers_modules_encoder_layer_0_modules_ln_1_parameters_weight_ = l_self_modules_encoder_modules_layers_modules_encoder_layer_0_modules_ln_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:113 in forward, code: x, _ = self.self_attention(x, x, x, need_weights=False)
        transpose: "f32[197, 32, 768]" = layer_norm.transpose(1, 0);  layer_norm = None
        return (transpose, dropout)
