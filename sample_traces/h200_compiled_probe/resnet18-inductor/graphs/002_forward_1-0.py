# tracekit: graph 2 (forward), compile id 1/0
# nodes 5, ops 1, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [0, 1]
# param: fc.weight
# param: fc.bias
# ends with: end: return_value (/opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:285 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, x_5: "f32[64, 512]", l_self_modules_fc_parameters_weight_: "f32[1000, 512]", l_self_modules_fc_parameters_bias_: "f32[1000]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:280 in _forward_impl, code: x = self.fc(x)
        linear: "f32[64, 1000]" = torch._C._nn.linear(x_5, l_self_modules_fc_parameters_weight_, l_self_modules_fc_parameters_bias_);  x_5 = l_self_modules_fc_parameters_weight_ = l_self_modules_fc_parameters_bias_ = None
        return (linear,)
