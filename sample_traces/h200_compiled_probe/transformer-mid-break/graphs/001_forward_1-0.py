# tracekit: graph 1 (forward), compile id 1/0
# nodes 7, ops 2, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [2]
# param: blocks.3.mlp.2.weight
# param: blocks.3.mlp.2.bias
# ends with: graph_break: Call to `torch._dynamo.graph_break()` (/work/main/tracekit/profile/models.py:202 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, input_11: "f32[4, 64, 1536]", l_self_modules_blocks_modules_3_modules_mlp_modules_2_parameters_weight_: "f32[384, 1536]", l_self_modules_blocks_modules_3_modules_mlp_modules_2_parameters_bias_: "f32[384]", x_7: "f32[4, 64, 384]"):
        # File: /work/main/tracekit/profile/models.py:187 in forward, code: return x + self.mlp(self.ln2(x))
        linear: "f32[4, 64, 384]" = torch._C._nn.linear(input_11, l_self_modules_blocks_modules_3_modules_mlp_modules_2_parameters_weight_, l_self_modules_blocks_modules_3_modules_mlp_modules_2_parameters_bias_);  input_11 = l_self_modules_blocks_modules_3_modules_mlp_modules_2_parameters_weight_ = l_self_modules_blocks_modules_3_modules_mlp_modules_2_parameters_bias_ = None
        add: "f32[4, 64, 384]" = x_7 + linear;  x_7 = linear = None
        return (add,)
