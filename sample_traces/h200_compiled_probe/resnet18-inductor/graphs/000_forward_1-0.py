# tracekit: graph 0 (forward), compile id 1/0
# nodes 167, ops 69, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [2]
# param: conv1.weight
# param: bn1.weight
# param: bn1.bias
# param: layer1.0.conv1.weight
# param: layer1.0.bn1.weight
# param: layer1.0.bn1.bias
# param: layer1.0.conv2.weight
# param: layer1.0.bn2.weight
# param: layer1.0.bn2.bias
# param: layer1.1.conv1.weight
# param: layer1.1.bn1.weight
# param: layer1.1.bn1.bias
# param: layer1.1.conv2.weight
# param: layer1.1.bn2.weight
# param: layer1.1.bn2.bias
# param: layer2.0.conv1.weight
# param: layer2.0.bn1.weight
# param: layer2.0.bn1.bias
# param: layer2.0.conv2.weight
# param: layer2.0.bn2.weight
# param: layer2.0.bn2.bias
# param: layer2.0.downsample.0.weight
# param: layer2.0.downsample.1.weight
# param: layer2.0.downsample.1.bias
# param: layer2.1.conv1.weight
# param: layer2.1.bn1.weight
# param: layer2.1.bn1.bias
# param: layer2.1.conv2.weight
# param: layer2.1.bn2.weight
# param: layer2.1.bn2.bias
# param: layer3.0.conv1.weight
# param: layer3.0.bn1.weight
# param: layer3.0.bn1.bias
# param: layer3.0.conv2.weight
# param: layer3.0.bn2.weight
# param: layer3.0.bn2.bias
# param: layer3.0.downsample.0.weight
# param: layer3.0.downsample.1.weight
# param: layer3.0.downsample.1.bias
# param: layer3.1.conv1.weight
# param: layer3.1.bn1.weight
# param: layer3.1.bn1.bias
# param: layer3.1.conv2.weight
# param: layer3.1.bn2.weight
# param: layer3.1.bn2.bias
# param: layer4.0.conv1.weight
# param: layer4.0.bn1.weight
# param: layer4.0.bn1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[64, 3, 224, 224]", l_self_modules_conv1_parameters_weight_: "f32[64, 3, 7, 7]", l_self_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_bn1_buffers_running_mean_: "f32[64]", l_self_modules_bn1_buffers_running_var_: "f32[64]", l_self_modules_bn1_parameters_weight_: "f32[64]", l_self_modules_bn1_parameters_bias_: "f32[64]", l_self_modules_layer1_modules_0_modules_conv1_parameters_weight_: "f32[64, 64, 3, 3]", l_self_modules_layer1_modules_0_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer1_modules_0_modules_bn1_buffers_running_mean_: "f32[64]", l_self_modules_layer1_modules_0_modules_bn1_buffers_running_var_: "f32[64]", l_self_modules_layer1_modules_0_modules_bn1_parameters_weight_: "f32[64]", l_self_modules_layer1_modules_0_modules_bn1_parameters_bias_: "f32[64]", l_self_modules_layer1_modules_0_modules_conv2_parameters_weight_: "f32[64, 64, 3, 3]", l_self_modules_layer1_modules_0_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer1_modules_0_modules_bn2_buffers_running_mean_: "f32[64]", l_self_modules_layer1_modules_0_modules_bn2_buffers_running_var_: "f32[64]", l_self_modules_layer1_modules_0_modules_bn2_parameters_weight_: "f32[64]", l_self_modules_layer1_modules_0_modules_bn2_parameters_bias_: "f32[64]", l_self_modules_layer1_modules_1_modules_conv1_parameters_weight_: "f32[64, 64, 3, 3]", l_self_modules_layer1_modules_1_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer1_modules_1_modules_bn1_buffers_running_mean_: "f32[64]", l_self_modules_layer1_modules_1_modules_bn1_buffers_running_var_: "f32[64]", l_self_modules_layer1_modules_1_modules_bn1_parameters_weight_: "f32[64]", l_self_modules_layer1_modules_1_modules_bn1_parameters_bias_: "f32[64]", l_self_modules_layer1_modules_1_modules_conv2_parameters_weight_: "f32[64, 64, 3, 3]", l_self_modules_layer1_modules_1_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer1_modules_1_modules_bn2_buffers_running_mean_: "f32[64]", l_self_modules_layer1_modules_1_modules_bn2_buffers_running_var_: "f32[64]", l_self_modules_layer1_modules_1_modules_bn2_parameters_weight_: "f32[64]", l_self_modules_layer1_modules_1_modules_bn2_parameters_bias_: "f32[64]", l_self_modules_layer2_modules_0_modules_conv1_parameters_weight_: "f32[128, 64, 3, 3]", l_self_modules_layer2_modules_0_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer2_modules_0_modules_bn1_buffers_running_mean_: "f32[128]", l_self_modules_layer2_modules_0_modules_bn1_buffers_running_var_: "f32[128]", l_self_modules_layer2_modules_0_modules_bn1_parameters_weight_: "f32[128]", l_self_modules_layer2_modules_0_modules_bn1_parameters_bias_: "f32[128]", l_self_modules_layer2_modules_0_modules_conv2_parameters_weight_: "f32[128, 128, 3, 3]", l_self_modules_layer2_modules_0_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer2_modules_0_modules_bn2_buffers_running_mean_: "f32[128]", l_self_modules_layer2_modules_0_modules_bn2_buffers_running_var_: "f32[128]", l_self_modules_layer2_modules_0_modules_bn2_parameters_weight_: "f32[128]", l_self_modules_layer2_modules_0_modules_bn2_parameters_bias_: "f32[128]", l_self_modules_layer2_modules_0_modules_downsample_modules_0_parameters_weight_: "f32[128, 64, 1, 1]", l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_mean_: "f32[128]", l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_var_: "f32[128]", l_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_weight_: "f32[128]", l_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_bias_: "f32[128]", l_self_modules_layer2_modules_1_modules_conv1_parameters_weight_: "f32[128, 128, 3, 3]", l_self_modules_layer2_modules_1_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer2_modules_1_modules_bn1_buffers_running_mean_: "f32[128]", l_self_modules_layer2_modules_1_modules_bn1_buffers_running_var_: "f32[128]", l_self_modules_layer2_modules_1_modules_bn1_parameters_weight_: "f32[128]", l_self_modules_layer2_modules_1_modules_bn1_parameters_bias_: "f32[128]", l_self_modules_layer2_modules_1_modules_conv2_parameters_weight_: "f32[128, 128, 3, 3]", l_self_modules_layer2_modules_1_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer2_modules_1_modules_bn2_buffers_running_mean_: "f32[128]", l_self_modules_layer2_modules_1_modules_bn2_buffers_running_var_: "f32[128]", l_self_modules_layer2_modules_1_modules_bn2_parameters_weight_: "f32[128]", l_self_modules_layer2_modules_1_modules_bn2_parameters_bias_: "f32[128]", l_self_modules_layer3_modules_0_modules_conv1_parameters_weight_: "f32[256, 128, 3, 3]", l_self_modules_layer3_modules_0_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer3_modules_0_modules_bn1_buffers_running_mean_: "f32[256]", l_self_modules_layer3_modules_0_modules_bn1_buffers_running_var_: "f32[256]", l_self_modules_layer3_modules_0_modules_bn1_parameters_weight_: "f32[256]", l_self_modules_layer3_modules_0_modules_bn1_parameters_bias_: "f32[256]", l_self_modules_layer3_modules_0_modules_conv2_parameters_weight_: "f32[256, 256, 3, 3]", l_self_modules_layer3_modules_0_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer3_modules_0_modules_bn2_buffers_running_mean_: "f32[256]", l_self_modules_layer3_modules_0_modules_bn2_buffers_running_var_: "f32[256]", l_self_modules_layer3_modules_0_modules_bn2_parameters_weight_: "f32[256]", l_self_modules_layer3_modules_0_modules_bn2_parameters_bias_: "f32[256]", l_self_modules_layer3_modules_0_modules_downsample_modules_0_parameters_weight_: "f32[256, 128, 1, 1]", l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_running_mean_: "f32[256]", l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_running_var_: "f32[256]", l_self_modules_layer3_modules_0_modules_downsample_modules_1_parameters_weight_: "f32[256]", l_self_modules_layer3_modules_0_modules_downsample_modules_1_parameters_bias_: "f32[256]", l_self_modules_layer3_modules_1_modules_conv1_parameters_weight_: "f32[256, 256, 3, 3]", l_self_modules_layer3_modules_1_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer3_modules_1_modules_bn1_buffers_running_mean_: "f32[256]", l_self_modules_layer3_modules_1_modules_bn1_buffers_running_var_: "f32[256]", l_self_modules_layer3_modules_1_modules_bn1_parameters_weight_: "f32[256]", l_self_modules_layer3_modules_1_modules_bn1_parameters_bias_: "f32[256]", l_self_modules_layer3_modules_1_modules_conv2_parameters_weight_: "f32[256, 256, 3, 3]", l_self_modules_layer3_modules_1_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer3_modules_1_modules_bn2_buffers_running_mean_: "f32[256]", l_self_modules_layer3_modules_1_modules_bn2_buffers_running_var_: "f32[256]", l_self_modules_layer3_modules_1_modules_bn2_parameters_weight_: "f32[256]", l_self_modules_layer3_modules_1_modules_bn2_parameters_bias_: "f32[256]", l_self_modules_layer4_modules_0_modules_conv1_parameters_weight_: "f32[512, 256, 3, 3]", l_self_modules_layer4_modules_0_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_0_modules_bn1_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn1_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn1_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn1_parameters_bias_: "f32[512]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:268 in _forward_impl, code: x = self.conv1(x)
        conv2d: "f32[64, 64, 112, 112]" = torch.conv2d(l_x_, l_self_modules_conv1_parameters_weight_, None, (2, 2), (3, 3), (1, 1), 1);  l_x_ = l_self_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:269 in _forward_impl, code: x = self.bn1(x)
        add_: "i64[]" = l_self_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_bn1_buffers_num_batches_tracked_ = add_ = None
        batch_norm: "f32[64, 64, 112, 112]" = torch.nn.functional.batch_norm(conv2d, l_self_modules_bn1_buffers_running_mean_, l_self_modules_bn1_buffers_running_var_, l_self_modules_bn1_parameters_weight_, l_self_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d = l_self_modules_bn1_buffers_running_mean_ = l_self_modules_bn1_buffers_running_var_ = l_self_modules_bn1_parameters_weight_ = l_self_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:270 in _forward_impl, code: x = self.relu(x)
        relu: "f32[64, 64, 112, 112]" = torch.nn.functional.relu(batch_norm, inplace = True);  batch_norm = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:271 in _forward_impl, code: x = self.maxpool(x)
        max_pool2d: "f32[64, 64, 56, 56]" = torch.nn.functional.max_pool2d(relu, 3, 2, 1, 1, ceil_mode = False, return_indices = False);  relu = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_1: "f32[64, 64, 56, 56]" = torch.conv2d(max_pool2d, l_self_modules_layer1_modules_0_modules_conv1_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  l_self_modules_layer1_modules_0_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__1: "i64[]" = l_self_modules_layer1_modules_0_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer1_modules_0_modules_bn1_buffers_num_batches_tracked_ = add__1 = None
        batch_norm_1: "f32[64, 64, 56, 56]" = torch.nn.functional.batch_norm(conv2d_1, l_self_modules_layer1_modules_0_modules_bn1_buffers_running_mean_, l_self_modules_layer1_modules_0_modules_bn1_buffers_running_var_, l_self_modules_layer1_modules_0_modules_bn1_parameters_weight_, l_self_modules_layer1_modules_0_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_1 = l_self_modules_layer1_modules_0_modules_bn1_buffers_running_mean_ = l_self_modules_layer1_modules_0_modules_bn1_buffers_running_var_ = l_self_modules_layer1_modules_0_modules_bn1_parameters_weight_ = l_self_modules_layer1_modules_0_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_1: "f32[64, 64, 56, 56]" = torch.nn.functional.relu(batch_norm_1, inplace = True);  batch_norm_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_2: "f32[64, 64, 56, 56]" = torch.conv2d(relu_1, l_self_modules_layer1_modules_0_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_1 = l_self_modules_layer1_modules_0_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__2: "i64[]" = l_self_modules_layer1_modules_0_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer1_modules_0_modules_bn2_buffers_num_batches_tracked_ = add__2 = None
        batch_norm_2: "f32[64, 64, 56, 56]" = torch.nn.functional.batch_norm(conv2d_2, l_self_modules_layer1_modules_0_modules_bn2_buffers_running_mean_, l_self_modules_layer1_modules_0_modules_bn2_buffers_running_var_, l_self_modules_layer1_modules_0_modules_bn2_parameters_weight_, l_self_modules_layer1_modules_0_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_2 = l_self_modules_layer1_modules_0_modules_bn2_buffers_running_mean_ = l_self_modules_layer1_modules_0_modules_bn2_buffers_running_var_ = l_self_modules_layer1_modules_0_modules_bn2_parameters_weight_ = l_self_modules_layer1_modules_0_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_2 += max_pool2d;  iadd: "f32[64, 64, 56, 56]" = batch_norm_2;  batch_norm_2 = max_pool2d = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_2: "f32[64, 64, 56, 56]" = torch.nn.functional.relu(iadd, inplace = True);  iadd = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_3: "f32[64, 64, 56, 56]" = torch.conv2d(relu_2, l_self_modules_layer1_modules_1_modules_conv1_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  l_self_modules_layer1_modules_1_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__3: "i64[]" = l_self_modules_layer1_modules_1_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer1_modules_1_modules_bn1_buffers_num_batches_tracked_ = add__3 = None
        batch_norm_3: "f32[64, 64, 56, 56]" = torch.nn.functional.batch_norm(conv2d_3, l_self_modules_layer1_modules_1_modules_bn1_buffers_running_mean_, l_self_modules_layer1_modules_1_modules_bn1_buffers_running_var_, l_self_modules_layer1_modules_1_modules_bn1_parameters_weight_, l_self_modules_layer1_modules_1_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_3 = l_self_modules_layer1_modules_1_modules_bn1_buffers_running_mean_ = l_self_modules_layer1_modules_1_modules_bn1_buffers_running_var_ = l_self_modules_layer1_modules_1_modules_bn1_parameters_weight_ = l_self_modules_layer1_modules_1_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_3: "f32[64, 64, 56, 56]" = torch.nn.functional.relu(batch_norm_3, inplace = True);  batch_norm_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_4: "f32[64, 64, 56, 56]" = torch.conv2d(relu_3, l_self_modules_layer1_modules_1_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_3 = l_self_modules_layer1_modules_1_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__4: "i64[]" = l_self_modules_layer1_modules_1_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer1_modules_1_modules_bn2_buffers_num_batches_tracked_ = add__4 = None
        batch_norm_4: "f32[64, 64, 56, 56]" = torch.nn.functional.batch_norm(conv2d_4, l_self_modules_layer1_modules_1_modules_bn2_buffers_running_mean_, l_self_modules_layer1_modules_1_modules_bn2_buffers_running_var_, l_self_modules_layer1_modules_1_modules_bn2_parameters_weight_, l_self_modules_layer1_modules_1_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_4 = l_self_modules_layer1_modules_1_modules_bn2_buffers_running_mean_ = l_self_modules_layer1_modules_1_modules_bn2_buffers_running_var_ = l_self_modules_layer1_modules_1_modules_bn2_parameters_weight_ = l_self_modules_layer1_modules_1_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_4 += relu_2;  iadd_1: "f32[64, 64, 56, 56]" = batch_norm_4;  batch_norm_4 = relu_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_4: "f32[64, 64, 56, 56]" = torch.nn.functional.relu(iadd_1, inplace = True);  iadd_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_5: "f32[64, 128, 28, 28]" = torch.conv2d(relu_4, l_self_modules_layer2_modules_0_modules_conv1_parameters_weight_, None, (2, 2), (1, 1), (1, 1), 1);  l_self_modules_layer2_modules_0_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__5: "i64[]" = l_self_modules_layer2_modules_0_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer2_modules_0_modules_bn1_buffers_num_batches_tracked_ = add__5 = None
        batch_norm_5: "f32[64, 128, 28, 28]" = torch.nn.functional.batch_norm(conv2d_5, l_self_modules_layer2_modules_0_modules_bn1_buffers_running_mean_, l_self_modules_layer2_modules_0_modules_bn1_buffers_running_var_, l_self_modules_layer2_modules_0_modules_bn1_parameters_weight_, l_self_modules_layer2_modules_0_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_5 = l_self_modules_layer2_modules_0_modules_bn1_buffers_running_mean_ = l_self_modules_layer2_modules_0_modules_bn1_buffers_running_var_ = l_self_modules_layer2_modules_0_modules_bn1_parameters_weight_ = l_self_modules_layer2_modules_0_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_5: "f32[64, 128, 28, 28]" = torch.nn.functional.relu(batch_norm_5, inplace = True);  batch_norm_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_6: "f32[64, 128, 28, 28]" = torch.conv2d(relu_5, l_self_modules_layer2_modules_0_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_5 = l_self_modules_layer2_modules_0_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__6: "i64[]" = l_self_modules_layer2_modules_0_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer2_modules_0_modules_bn2_buffers_num_batches_tracked_ = add__6 = None
        batch_norm_6: "f32[64, 128, 28, 28]" = torch.nn.functional.batch_norm(conv2d_6, l_self_modules_layer2_modules_0_modules_bn2_buffers_running_mean_, l_self_modules_layer2_modules_0_modules_bn2_buffers_running_var_, l_self_modules_layer2_modules_0_modules_bn2_parameters_weight_, l_self_modules_layer2_modules_0_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_6 = l_self_modules_layer2_modules_0_modules_bn2_buffers_running_mean_ = l_self_modules_layer2_modules_0_modules_bn2_buffers_running_var_ = l_self_modules_layer2_modules_0_modules_bn2_parameters_weight_ = l_self_modules_layer2_modules_0_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:100 in forward, code: identity = self.downsample(x)
        conv2d_7: "f32[64, 128, 28, 28]" = torch.conv2d(relu_4, l_self_modules_layer2_modules_0_modules_downsample_modules_0_parameters_weight_, None, (2, 2), (0, 0), (1, 1), 1);  relu_4 = l_self_modules_layer2_modules_0_modules_downsample_modules_0_parameters_weight_ = None
        add__7: "i64[]" = l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_ = add__7 = None
        batch_norm_7: "f32[64, 128, 28, 28]" = torch.nn.functional.batch_norm(conv2d_7, l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_mean_, l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_var_, l_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_weight_, l_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_bias_, True, 0.1, 1e-05);  conv2d_7 = l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_mean_ = l_self_modules_layer2_modules_0_modules_downsample_modules_1_buffers_running_var_ = l_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_weight_ = l_self_modules_layer2_modules_0_modules_downsample_modules_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_6 += batch_norm_7;  iadd_2: "f32[64, 128, 28, 28]" = batch_norm_6;  batch_norm_6 = batch_norm_7 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_6: "f32[64, 128, 28, 28]" = torch.nn.functional.relu(iadd_2, inplace = True);  iadd_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_8: "f32[64, 128, 28, 28]" = torch.conv2d(relu_6, l_self_modules_layer2_modules_1_modules_conv1_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  l_self_modules_layer2_modules_1_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__8: "i64[]" = l_self_modules_layer2_modules_1_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer2_modules_1_modules_bn1_buffers_num_batches_tracked_ = add__8 = None
        batch_norm_8: "f32[64, 128, 28, 28]" = torch.nn.functional.batch_norm(conv2d_8, l_self_modules_layer2_modules_1_modules_bn1_buffers_running_mean_, l_self_modules_layer2_modules_1_modules_bn1_buffers_running_var_, l_self_modules_layer2_modules_1_modules_bn1_parameters_weight_, l_self_modules_layer2_modules_1_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_8 = l_self_modules_layer2_modules_1_modules_bn1_buffers_running_mean_ = l_self_modules_layer2_modules_1_modules_bn1_buffers_running_var_ = l_self_modules_layer2_modules_1_modules_bn1_parameters_weight_ = l_self_modules_layer2_modules_1_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_7: "f32[64, 128, 28, 28]" = torch.nn.functional.relu(batch_norm_8, inplace = True);  batch_norm_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_9: "f32[64, 128, 28, 28]" = torch.conv2d(relu_7, l_self_modules_layer2_modules_1_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_7 = l_self_modules_layer2_modules_1_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__9: "i64[]" = l_self_modules_layer2_modules_1_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer2_modules_1_modules_bn2_buffers_num_batches_tracked_ = add__9 = None
        batch_norm_9: "f32[64, 128, 28, 28]" = torch.nn.functional.batch_norm(conv2d_9, l_self_modules_layer2_modules_1_modules_bn2_buffers_running_mean_, l_self_modules_layer2_modules_1_modules_bn2_buffers_running_var_, l_self_modules_layer2_modules_1_modules_bn2_parameters_weight_, l_self_modules_layer2_modules_1_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_9 = l_self_modules_layer2_modules_1_modules_bn2_buffers_running_mean_ = l_self_modules_layer2_modules_1_modules_bn2_buffers_running_var_ = l_self_modules_layer2_modules_1_modules_bn2_parameters_weight_ = l_self_modules_layer2_modules_1_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_9 += relu_6;  iadd_3: "f32[64, 128, 28, 28]" = batch_norm_9;  batch_norm_9 = relu_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_8: "f32[64, 128, 28, 28]" = torch.nn.functional.relu(iadd_3, inplace = True);  iadd_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_10: "f32[64, 256, 14, 14]" = torch.conv2d(relu_8, l_self_modules_layer3_modules_0_modules_conv1_parameters_weight_, None, (2, 2), (1, 1), (1, 1), 1);  l_self_modules_layer3_modules_0_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__10: "i64[]" = l_self_modules_layer3_modules_0_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer3_modules_0_modules_bn1_buffers_num_batches_tracked_ = add__10 = None
        batch_norm_10: "f32[64, 256, 14, 14]" = torch.nn.functional.batch_norm(conv2d_10, l_self_modules_layer3_modules_0_modules_bn1_buffers_running_mean_, l_self_modules_layer3_modules_0_modules_bn1_buffers_running_var_, l_self_modules_layer3_modules_0_modules_bn1_parameters_weight_, l_self_modules_layer3_modules_0_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_10 = l_self_modules_layer3_modules_0_modules_bn1_buffers_running_mean_ = l_self_modules_layer3_modules_0_modules_bn1_buffers_running_var_ = l_self_modules_layer3_modules_0_modules_bn1_parameters_weight_ = l_self_modules_layer3_modules_0_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_9: "f32[64, 256, 14, 14]" = torch.nn.functional.relu(batch_norm_10, inplace = True);  batch_norm_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_11: "f32[64, 256, 14, 14]" = torch.conv2d(relu_9, l_self_modules_layer3_modules_0_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_9 = l_self_modules_layer3_modules_0_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__11: "i64[]" = l_self_modules_layer3_modules_0_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer3_modules_0_modules_bn2_buffers_num_batches_tracked_ = add__11 = None
        batch_norm_11: "f32[64, 256, 14, 14]" = torch.nn.functional.batch_norm(conv2d_11, l_self_modules_layer3_modules_0_modules_bn2_buffers_running_mean_, l_self_modules_layer3_modules_0_modules_bn2_buffers_running_var_, l_self_modules_layer3_modules_0_modules_bn2_parameters_weight_, l_self_modules_layer3_modules_0_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_11 = l_self_modules_layer3_modules_0_modules_bn2_buffers_running_mean_ = l_self_modules_layer3_modules_0_modules_bn2_buffers_running_var_ = l_self_modules_layer3_modules_0_modules_bn2_parameters_weight_ = l_self_modules_layer3_modules_0_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:100 in forward, code: identity = self.downsample(x)
        conv2d_12: "f32[64, 256, 14, 14]" = torch.conv2d(relu_8, l_self_modules_layer3_modules_0_modules_downsample_modules_0_parameters_weight_, None, (2, 2), (0, 0), (1, 1), 1);  relu_8 = l_self_modules_layer3_modules_0_modules_downsample_modules_0_parameters_weight_ = None
        add__12: "i64[]" = l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_ = add__12 = None
        batch_norm_12: "f32[64, 256, 14, 14]" = torch.nn.functional.batch_norm(conv2d_12, l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_running_mean_, l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_running_var_, l_self_modules_layer3_modules_0_modules_downsample_modules_1_parameters_weight_, l_self_modules_layer3_modules_0_modules_downsample_modules_1_parameters_bias_, True, 0.1, 1e-05);  conv2d_12 = l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_running_mean_ = l_self_modules_layer3_modules_0_modules_downsample_modules_1_buffers_running_var_ = l_self_modules_layer3_modules_0_modules_downsample_modules_1_parameters_weight_ = l_self_modules_layer3_modules_0_modules_downsample_modules_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_11 += batch_norm_12;  iadd_4: "f32[64, 256, 14, 14]" = batch_norm_11;  batch_norm_11 = batch_norm_12 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_10: "f32[64, 256, 14, 14]" = torch.nn.functional.relu(iadd_4, inplace = True);  iadd_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_13: "f32[64, 256, 14, 14]" = torch.conv2d(relu_10, l_self_modules_layer3_modules_1_modules_conv1_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  l_self_modules_layer3_modules_1_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__13: "i64[]" = l_self_modules_layer3_modules_1_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer3_modules_1_modules_bn1_buffers_num_batches_tracked_ = add__13 = None
        batch_norm_13: "f32[64, 256, 14, 14]" = torch.nn.functional.batch_norm(conv2d_13, l_self_modules_layer3_modules_1_modules_bn1_buffers_running_mean_, l_self_modules_layer3_modules_1_modules_bn1_buffers_running_var_, l_self_modules_layer3_modules_1_modules_bn1_parameters_weight_, l_self_modules_layer3_modules_1_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_13 = l_self_modules_layer3_modules_1_modules_bn1_buffers_running_mean_ = l_self_modules_layer3_modules_1_modules_bn1_buffers_running_var_ = l_self_modules_layer3_modules_1_modules_bn1_parameters_weight_ = l_self_modules_layer3_modules_1_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_11: "f32[64, 256, 14, 14]" = torch.nn.functional.relu(batch_norm_13, inplace = True);  batch_norm_13 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:96 in forward, code: out = self.conv2(out)
        conv2d_14: "f32[64, 256, 14, 14]" = torch.conv2d(relu_11, l_self_modules_layer3_modules_1_modules_conv2_parameters_weight_, None, (1, 1), (1, 1), (1, 1), 1);  relu_11 = l_self_modules_layer3_modules_1_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:97 in forward, code: out = self.bn2(out)
        add__14: "i64[]" = l_self_modules_layer3_modules_1_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer3_modules_1_modules_bn2_buffers_num_batches_tracked_ = add__14 = None
        batch_norm_14: "f32[64, 256, 14, 14]" = torch.nn.functional.batch_norm(conv2d_14, l_self_modules_layer3_modules_1_modules_bn2_buffers_running_mean_, l_self_modules_layer3_modules_1_modules_bn2_buffers_running_var_, l_self_modules_layer3_modules_1_modules_bn2_parameters_weight_, l_self_modules_layer3_modules_1_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d_14 = l_self_modules_layer3_modules_1_modules_bn2_buffers_running_mean_ = l_self_modules_layer3_modules_1_modules_bn2_buffers_running_var_ = l_self_modules_layer3_modules_1_modules_bn2_parameters_weight_ = l_self_modules_layer3_modules_1_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:102 in forward, code: out += identity
        batch_norm_14 += relu_10;  iadd_5: "f32[64, 256, 14, 14]" = batch_norm_14;  batch_norm_14 = relu_10 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:103 in forward, code: out = self.relu(out)
        relu_12: "f32[64, 256, 14, 14]" = torch.nn.functional.relu(iadd_5, inplace = True);  iadd_5 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:92 in forward, code: out = self.conv1(x)
        conv2d_15: "f32[64, 512, 7, 7]" = torch.conv2d(relu_12, l_self_modules_layer4_modules_0_modules_conv1_parameters_weight_, None, (2, 2), (1, 1), (1, 1), 1);  l_self_modules_layer4_modules_0_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:93 in forward, code: out = self.bn1(out)
        add__15: "i64[]" = l_self_modules_layer4_modules_0_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_0_modules_bn1_buffers_num_batches_tracked_ = add__15 = None
        batch_norm_15: "f32[64, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d_15, l_self_modules_layer4_modules_0_modules_bn1_buffers_running_mean_, l_self_modules_layer4_modules_0_modules_bn1_buffers_running_var_, l_self_modules_layer4_modules_0_modules_bn1_parameters_weight_, l_self_modules_layer4_modules_0_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_15 = l_self_modules_layer4_modules_0_modules_bn1_buffers_running_mean_ = l_self_modules_layer4_modules_0_modules_bn1_buffers_running_var_ = l_self_modules_layer4_modules_0_modules_bn1_parameters_weight_ = l_self_modules_layer4_modules_0_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:94 in forward, code: out = self.relu(out)
        relu_13: "f32[64, 512, 7, 7]" = torch.nn.functional.relu(batch_norm_15, inplace = True);  batch_norm_15 = None
        return (relu_13, relu_12)
