# tracekit: graph 13 (forward), compile id 0/0
# nodes 5, ops 1, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: heads.head.weight
# param: heads.head.bias
# ends with: end: return_value (/opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:305 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, x_53: "f32[32, 768]", l_self_modules_heads_modules_head_parameters_weight_: "f32[1000, 768]", l_self_modules_heads_modules_head_parameters_bias_: "f32[1000]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/vision_transformer.py:303 in forward, code: x = self.heads(x)
        linear: "bf16[32, 1000]" = torch._C._nn.linear(x_53, l_self_modules_heads_modules_head_parameters_weight_, l_self_modules_heads_modules_head_parameters_bias_);  x_53 = l_self_modules_heads_modules_head_parameters_weight_ = l_self_modules_heads_modules_head_parameters_bias_ = None
        return (linear,)
