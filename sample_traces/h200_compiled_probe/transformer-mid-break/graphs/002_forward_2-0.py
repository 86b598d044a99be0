# tracekit: graph 2 (forward), compile id 2/0
# nodes 17, ops 11, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [2]
# param: blocks.4.ln1.weight
# param: blocks.4.ln1.bias
# param: blocks.4.qkv.weight
# param: blocks.4.qkv.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[4, 64, 384]", l_self_modules_blocks_modules_4_modules_ln1_parameters_weight_: "f32[384]", l_self_modules_blocks_modules_4_modules_ln1_parameters_bias_: "f32[384]", l_self_modules_blocks_modules_4_modules_qkv_parameters_weight_: "f32[1152, 384]", l_self_modules_blocks_modules_4_modules_qkv_parameters_bias_: "f32[1152]"):
        # File: /work/main/tracekit/profile/models.py:203 in torch_dynamo_resume_in_forward_at_202, code: for blk in self.blocks[cut:]:
        _log_api_usage_once = torch._C._log_api_usage_once('python.nn_module');  _log_api_usage_once = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm: "f32[4, 64, 384]" = torch.nn.functional.layer_norm(l_x_, (384,), l_self_modules_blocks_modules_4_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_4_modules_ln1_parameters_bias_, 1e-05);  l_x_ = l_self_modules_blocks_modules_4_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_4_modules_ln1_parameters_bias_ = None
        linear: "f32[4, 64, 1152]" = torch._C._nn.linear(layer_norm, l_self_modules_blocks_modules_4_modules_qkv_parameters_weight_, l_self_modules_blocks_modules_4_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_blocks_modules_4_modules_qkv_parameters_weight_ = l_self_modules_blocks_modules_4_modules_qkv_parameters_bias_ = None

        # File: /work/main/tracekit/profile/models.py:184 in forward, code: q, k, v = qkv.view(b, t, local_heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        view: "f32[4, 64, 4, 3, 96]" = linear.view(4, 64, 4, 3, 96);  linear = None
        permute: "f32[3, 4, 4, 64, 96]" = view.permute(3, 0, 2, 1, 4);  view = None
        getitem: "f32[4, 4, 64, 96]" = permute[0]
        getitem_1: "f32[4, 4, 64, 96]" = permute[1]
        getitem_2: "f32[4, 4, 64, 96]" = permute[2];  permute = None

        # File: /work/main/tracekit/profile/models.py:185 in forward, code: a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scaled_dot_product_attention: "f32[4, 4, 64, 96]" = torch._C._nn.scaled_dot_product_attention(getitem, getitem_1, getitem_2, is_causal = True);  getitem = getitem_1 = getitem_2 = None

        # File: /work/main/tracekit/profile/models.py:186 in forward, code: x = x + self.proj(a.transpose(1, 2).reshape(b, t, local_heads * head_dim))
        transpose: "f32[4, 64, 4, 96]" = scaled_dot_product_attention.transpose(1, 2);  scaled_dot_product_attention = None
        reshape: "f32[4, 64, 384]" = transpose.reshape(4, 64, 384);  transpose = None
        return (reshape,)
