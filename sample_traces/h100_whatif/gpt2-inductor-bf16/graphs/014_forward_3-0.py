# tracekit: graph 14 (forward), compile id 3/0
# nodes 11, ops 8, allreduces 0
# DDPOptimizer submodule: False; reducer buckets: []
# ends with: end: return_value (/opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:71 in ForCausalLMLoss)

class GraphModule(torch.nn.Module):
    def forward(self, L_logits_: "bf16[8, 512, 50257]", L_labels_: "i64[8, 512]"):
        l_logits_ = L_logits_
        l_labels_ = L_labels_

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        logits: "f32[8, 512, 50257]" = l_logits_.float();  l_logits_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py:5430 in pad, code: return torch._C._nn.pad(input, pad, mode, value)
        labels: "i64[8, 513]" = torch._C._nn.pad(l_labels_, (0, 1), 'constant', -100);  l_labels_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:64 in ForCausalLMLoss, code: shift_labels = labels[..., 1:].contiguous()
        getitem: "i64[8, 512]" = labels[(Ellipsis, slice(1, None, None))];  labels = None
        shift_labels: "i64[8, 512]" = getitem.contiguous();  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        logits_1: "f32[4096, 50257]" = logits.view(-1, 50257);  logits = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:68 in ForCausalLMLoss, code: shift_labels = shift_labels.view(-1)
        shift_labels_1: "i64[4096]" = shift_labels.view(-1);  shift_labels = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:69 in ForCausalLMLoss, code: shift_labels = shift_labels.to(logits.device)
        shift_labels_2: "i64[4096]" = shift_labels_1.to(device(type='cuda', index=0));  shift_labels_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        loss: "f32[]" = torch.nn.functional.cross_entropy(logits_1, shift_labels_2, ignore_index = -100, reduction = 'mean');  logits_1 = shift_labels_2 = None
        return (loss,)
