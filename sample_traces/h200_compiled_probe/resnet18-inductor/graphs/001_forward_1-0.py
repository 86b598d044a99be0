# tracekit: graph 1 (forward), compile id 1/0
# nodes 46, ops 19, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [1, 2]
# param: layer4.0.conv2.weight
# param: layer4.0.bn2.weight
# param: layer4.0.bn2.bias
# param: layer4.0.downsample.0.weight
# param: layer4.0.downsample.1.weight
# param: layer4.0.downsample.1.bias
# param: layer4.1.conv1.weight
# param: layer4.1.bn1.weight
# param: layer4.1.bn1.bias
# param: layer4.1.conv2.weight
# param: layer4.1.bn2.weight
# param: layer4.1.bn2.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, out_44: "f32[64, 512, 7, 7]", l_self_modules_layer4_modules_0_modules_conv2_parameters_weight_: "f32[512, 512, 3, 3]", l_self_modules_layer4_modules_0_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_0_modules_bn2_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn2_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn2_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn2_parameters_bias_: "f32[512]", out_41: "f32[64, 256, 14, 14]", l_self_modules_layer4_modules_0_modules_downsample_modules_0_parameters_weight_: "f32[512, 256, 1, 1]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_bias_: "f32[512]", l_self_modules_layer4_modules_1_modules_conv1_parameters_weight_: "f32[512, 512, 3, 3]", l_self_modules_layer4_modules_1_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_1_modules_bn1_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn1_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn1_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn1_parameters_bias_: "f32[512]", l_self_modules_layer4_modules_1_modules_conv2_parameters_weight_: "f32[512, 512, 3, 3]", l_self_modules_layer4_modules_1_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_1_modules_bn2_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn2_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn2_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn2_parameters_bias_: "f32[512]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d: "f32[64, 512, 7, 7]" = torch.conv2d(out_44, l_self_modules_layer4_modules_0_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  out_44 = l_self_modules_layer4_modules_0_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add_: "i64[]" = l_self_modules_layer4_modules_0_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_0_modules_bn2_buffers_num_batches_tracked_ = add_ = None
        batch_norm: "f32[64, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d, l_self_modules_layer4_modules_0_modules_bn2_buffers_running_mean_, l_self_modules_layer4_modules_0_modules_bn2_buffers_running_var_, l_self_modules_layer4_modules_0_modules_bn2_parameters_weight_, l_self_modules_layer4_modules_0_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d = l_self_modules_layer4_modules_0_modules_bn2_buffers_running_mean_ = l_self_modules_layer4_modules_0_modules_bn2_buffers_running_var_ = l_self_modules_layer4_modules_0_modules_bn2_parameters_weight_ = l_self_modules_layer4_modules_0_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:100 in forward, code: identity = self.downsample(x)
        conv2d_1: "f32[64, 512, 7, 7]" = torch.conv2d(out_41, l_self_modules_layer4_modules_0_modules_downsample_modules_0_parameters_weight_, None, (2, 2), (0, 0), (1, 1), 1);  out_41 = l_self_modules_layer4_modules_0_modules_downsample_modules_0_parameters_weight_ = None
        add__1: "i64[]" = l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_ = add__1 = None
        batch_norm_1: "f32[64, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d_1, l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_mean_, l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_var_, l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_weight_, l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_bias_, True, 0.1, 1e-05);  conv2d_1 = l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_mean_ = l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_var_ = l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_weight_ = l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm += batch_norm_1;  iadd: "f32[64, 512, 7, 7]" = batch_norm;  batch_norm = batch_norm_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu: "f32[64, 512, 7, 7]" = torch.nn.functional.relu(iadd, inplace = True);  iadd = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_2: "f32[64, 512, 7, 7]" = torch.conv2d(relu, l_self_modules_layer4_modules_1_modules_conv1_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  l_self_modules_layer4_modules_1_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__2: "i64[]" = l_self_modules_layer4_modules_1_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_1_modules_bn1_buffers_num_batches_tracked_ = add__2 = None
        batch_norm_2: "f32[64, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d_2, l_self_modules_layer4_modules_1_modules_bn1_buffers_running_mean_, l_self_modules_layer4_modules_1_modules_bn1_buffers_running_var_, l_self_modules_layer4_modules_1_modules_bn1_parameters_weight_, l_self_modules_layer4_modules_1_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_2 = l_self_modules_layer4_modules_1_modules_bn1_buffers_running_mean_ = l_self_modules_layer4_modules_1_modules_bn1_buffers_running_var_ = l_self_modules_layer4_modules_1_modules_bn1_parameters_weight_ = l_self_modules_layer4_modules_1_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_1: "f32[64, 512, 7, 7]" = torch.nn.functional.relu(batch_norm_2, inplace = True);  batch_norm_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_3: "f32[64, 512, 7, 7]" = torch.conv2d(relu_1, l_self_modules_layer4_modules_1_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_1 = l_self_modules_layer4_modules_1_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__3: "i64[]" = l_self_modules_layer4_modules_1_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_1_modules_bn2_buffers_num_batches_tracked_ = add__3 = None
        batch_norm_3: "f32[64, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d_3, l_self_modules_layer4_modules_1_modules_bn2_buffers_running_mean_, l_self_modules_layer4_modules_1_modules_bn2_buffers_running_var_, l_self_modules_layer4_modules_1_modules_bn2_parameters_weight_, l_self_modules_layer4_modules_1_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_3 = l_self_modules_layer4_modules_1_modules_bn2_buffers_running_mean_ = l_self_modules_layer4_modules_1_modules_bn2_buffers_running_var_ = l_self_modules_layer4_modules_1_modules_bn2_parameters_weight_ = l_self_modules_layer4_modules_1_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_3 += relu;  iadd_1: "f32[64, 512, 7, 7]" = batch_norm_3;  batch_norm_3 = relu = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_2: "f32[64, 512, 7, 7]" = torch.nn.functional.relu(iadd_1, inplace = True);  iadd_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:278 in _forward_impl, code: x = self.avgpool(x)
        adaptive_avg_pool2d: "f32[64, 512, 1, 1]" = torch.nn.functional.adaptive_avg_pool2d(relu_2, (1, 1));  relu_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:279 in _forward_impl, code: x = torch.flatten(x, 1)
        flatten: "f32[64, 512]" = torch.flatten(adaptive_avg_pool2d, 1);  adaptive_avg_pool2d = None
        return (flatten,)
