# tracekit: graph 1 (forward), compile id 1/0
# nodes 7, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1, 2]
# param: blocks.4.mlp.2.weight
# param: blocks.4.mlp.2.bias
# ends with: graph_break: Call to `torch._dynamo.graph_break()` (/work/main/tracekit/profile/models.py:202 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_14: "f32[2, 64, 1280]", l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_weight_: "f32[320, 1280]", l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_bias_: "f32[320]", x_9: "f32[2, 64, 320]"):
        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        linear: "f32[2, 64, 320]" = torch._C._nn.linear(input_14, l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_bias_);  input_14 = l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_4_modules_mlp_modules_2_parameters_bias_ = None
        add: "f32[2, 64, 320]" = x_9 + linear;  x_9 = linear = None
        return (add,)
