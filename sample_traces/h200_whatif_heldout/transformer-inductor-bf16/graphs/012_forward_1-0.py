# tracekit: graph 12 (forward), compile id 1/0
# nodes 15, ops 6, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1, 2]
# param: blocks.7.mlp.0.weight
# param: blocks.7.mlp.0.bias
# param: blocks.7.mlp.2.weight
# param: blocks.7.mlp.2.bias
# param: ln.weight
# param: ln.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, layer_norm_15: "f32[8, 512, 1024]", l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_: "f32[4096, 1024]", l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_: "f32[4096]", l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_: "f32[1024, 4096]", l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_: "f32[1024]", x_15: "f32[8, 512, 1024]", l_self_modules_ln_parameters_weight_: "f32[1024]", l_self_modules_ln_parameters_bias_: "f32[1024]"):
        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        linear: "bf16[8, 512, 4096]" = torch._C._nn.linear(layer_norm_15, l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_, l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_);  layer_norm_15 = l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_weight_ = l_self_modules_blocks_modules_7_modules_mlp_modules_0_parameters_bias_ = None
        gelu: "bf16[8, 512, 4096]" = torch._C._nn.gelu(linear, approximate = 'none');  linear = None
        linear_1: "bf16[8, 512, 1024]" = torch._C._nn.linear(gelu, l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_);  gelu = l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_7_modules_mlp_modules_2_parameters_bias_ = None
        add: "f32[8, 512, 1024]" = x_15 + linear_1;  x_15 = linear_1 = None

        # File: /work/main/tracekit/profile/models.py:203 in forward, code: for blk in self.blocks[cut:]:
        _log_api_usage_once = torch._C._log_api_usage_once('python.nn_module');  _log_api_usage_once = None

        # File: /work/main/tracekit/profile/models.py:205 in forward, code: return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1).float(), tokens.flatten())
        layer_norm: "f32[8, 512, 1024]" = torch.nn.functional.layer_norm(add, (1024,), l_self_modules_ln_parameters_weight_, l_self_modules_ln_parameters_bias_, 1e-05);  add = l_self_modules_ln_parameters_weight_ = l_self_modules_ln_parameters_bias_ = None
        return (layer_norm,)
