# tracekit: graph 3 (forward), compile id 2/0
# nodes 10, ops 5, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: head.weight
# param: head.bias
# ends with: end: return_value (/work/main/tracekit/profile/models.py:205 in torch_dynamo_resume_in_forward_at_202)

class GraphModule(torch.nn.Module):
    def forward(self, layer_norm_10: "f32[2, 64, 320]", l_self_modules_head_parameters_weight_: "f32[1024, 320]", l_self_modules_head_parameters_bias_: "f32[1024]", l_tokens_: "i64[2, 64]"):
        # File: /work/main/tracekit/profile/models.py:205 in torch_dynamo_resume_in_forward_at_202, code: return F.cross_entropy(self.head(self.ln(x)).flatten(0, 1).float(), tokens.flatten())
        linear: "f32[2, 64, 1024]" = torch._C._nn.linear(layer_norm_10, l_self_modules_head_parameters_weight_, l_self_modules_head_parameters_bias_);  layer_norm_10 = l_self_modules_head_parameters_weight_ = l_self_modules_head_parameters_bias_ = None
        flatten: "f32[128, 1024]" = linear.flatten(0, 1);  linear = None
        float_1: "f32[128, 1024]" = flatten.float();  flatten = None
        flatten_1: "i64[128]" = l_tokens_.flatten();  l_tokens_ = None
        cross_entropy: "f32[]" = torch.nn.functional.cross_entropy(float_1, flatten_1);  float_1 = flatten_1 = None
        return (cross_entropy,)
