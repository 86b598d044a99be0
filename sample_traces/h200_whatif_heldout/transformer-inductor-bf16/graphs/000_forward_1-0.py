# tracekit: graph 0 (forward), compile id 1/0
# nodes 8, ops 3, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [13]
# param: embed.weight
# param: blocks.0.ln1.weight
# param: blocks.0.ln1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_tokens_: "i64[8, 512]", l_self_modules_embed_parameters_weight_: "f32[1024, 1024]", l_self_modules_blocks_modules_0_modules_ln1_parameters_weight_: "f32[1024]", l_self_modules_blocks_modules_0_modules_ln1_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:198 in forward, code: x = self.embed(tokens)
        embedding: "f32[8, 512, 1024]" = torch.nn.functional.embedding(l_tokens_, l_self_modules_embed_parameters_weight_, None, None, 2.0, False, False);  l_tokens_ = l_self_modules_embed_parameters_weight_ = None

        # File: /work/main/tracekit/profile/models.py:199 in forward, code: for blk in self.blocks[:cut]:
        _log_api_usage_once = torch._C._log_api_usage_once('python.nn_module');  _log_api_usage_once = None

        # File: /work/main/tracekit/profile/models.py:181 in forward, code: qkv = self.qkv(self.ln1(x))
        layer_norm: "f32[8, 512, 1024]" = torch.nn.functional.layer_norm(embedding, (1024,), l_self_modules_blocks_modules_0_modules_ln1_parameters_weight_, l_self_modules_blocks_modules_0_modules_ln1_parameters_bias_, 1e-05);  l_self_modules_blocks_modules_0_modules_ln1_parameters_weight_ = l_self_modules_blocks_modules_0_modules_ln1_parameters_bias_ = None
        return (layer_norm, embedding)
