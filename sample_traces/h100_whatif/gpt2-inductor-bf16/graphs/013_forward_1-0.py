# tracekit: graph 13 (forward), compile id 1/0
# nodes 4, ops 1, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [12]
# param: transformer.wte.weight
# ends with: graph_break: step_unsupported (/opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:702 in forward)

class GraphModule(torch.nn.Module):
    def forward(self, getitem_40: "f32[8, 512, 768]", l_self_modules_transformer_modules_wte_parameters_weight_: "f32[50257, 768]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/gpt2/modeling_gpt2.py:697 in forward, code: logits = self.lm_head(hidden_states[:, slice_indices, :])
        linear: "bf16[8, 512, 50257]" = torch._C._nn.linear(getitem_40, l_self_modules_transformer_modules_wte_parameters_weight_, None);  getitem_40 = l_self_modules_transformer_modules_wte_parameters_weight_ = None
        return (linear,)
