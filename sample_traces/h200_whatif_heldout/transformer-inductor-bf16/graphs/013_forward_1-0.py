# tracekit: graph 13 (forward), compile id 1/0
# nodes 10, ops 5, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: head.weight
# param: head.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:205 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, layer_norm_16: "f32[8, 512, 1024]", l_self_modules_head_parameters_weight_: "f32[1024, 1024]", l_self_modules_head_parameters_bias_: "f32[1024]", l_tokens_: "i64[8, 512]"):
        # File: /work/main/tracekit/profile/models.py:205 in forward, code: return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1).float(), tokens.flatten())
        linear: "bf16[8, 512, 1024]" = torch._C._nn.linear(layer_norm_16, l_self_modules_head_parameters_weight_, l_self_modules_head_parameters_bias_);  layer_norm_16 = l_self_modules_head_parameters_weight_ = l_self_modules_head_parameters_bias_ = None
        flatten: "bf16[4096, 1024]" = linear.flatten(0, 1);  linear = None
        float_1: "f32[4096, 1024]" = flatten.float();  flatten = None
        flatten_1: "i64[4096]" = l_tokens_.flatten();  l_tokens_ = None
        cross_entropy: "f32[]" = torch.nn.functional.cross_entropy(float_1, flatten_1);  float_1 = flatten_1 = None
        return (cross_entropy,)
