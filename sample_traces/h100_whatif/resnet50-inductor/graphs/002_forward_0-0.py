# tracekit: graph 2 (forward), compile id 0/0
# nodes 43, ops 16, allreduces 0
# DDPOptimizer submodule: True; reducer buckets: [2, 3]
# param: layer4.0.conv2.weight
# param: layer4.0.bn2.weight
# param: layer4.0.bn2.bias
# param: layer4.0.conv3.weight
# param: layer4.0.bn3.weight
# param: layer4.0.bn3.bias
# param: layer4.0.downsample.0.weight
# param: layer4.0.downsample.1.weight
# param: layer4.0.downsample.1.bias
# param: layer4.1.conv1.weight
# param: layer4.1.bn1.weight
# param: layer4.1.bn1.bias
# ends with: ddp_split: DDPOptimizer bucket boundary (None)

class GraphModule(torch.nn.Module):
    def forward(self, out_132: "f32[32, 512, 14, 14]", l_self_modules_layer4_modules_0_modules_conv2_parameters_weight_: "f32[512, 512, 3, 3]", l_self_modules_layer4_modules_0_modules_bn2_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_0_modules_bn2_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn2_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn2_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_0_modules_bn2_parameters_bias_: "f32[512]", l_self_modules_layer4_modules_0_modules_conv3_parameters_weight_: "f32[2048, 512, 1, 1]", l_self_modules_layer4_modules_0_modules_bn3_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_0_modules_bn3_buffers_running_mean_: "f32[2048]", l_self_modules_layer4_modules_0_modules_bn3_buffers_running_var_: "f32[2048]", l_self_modules_layer4_modules_0_modules_bn3_parameters_weight_: "f32[2048]", l_self_modules_layer4_modules_0_modules_bn3_parameters_bias_: "f32[2048]", out_129: "f32[32, 1024, 14, 14]", l_self_modules_layer4_modules_0_modules_downsample_modules_0_parameters_weight_: "f32[2048, 1024, 1, 1]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_mean_: "f32[2048]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_var_: "f32[2048]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_weight_: "f32[2048]", l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_bias_: "f32[2048]", l_self_modules_layer4_modules_1_modules_conv1_parameters_weight_: "f32[512, 2048, 1, 1]", l_self_modules_layer4_modules_1_modules_bn1_buffers_num_batches_tracked_: "i64[]", l_self_modules_layer4_modules_1_modules_bn1_buffers_running_mean_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn1_buffers_running_var_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn1_parameters_weight_: "f32[512]", l_self_modules_layer4_modules_1_modules_bn1_parameters_bias_: "f32[512]"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:150 in forward, code: out = self.conv2(out)
        conv2d: "f32[32, 512, 7, 7]" = torch.conv2d(out_132, l_self_modules_layer4_modules_0_modules_conv2_parameters_weight_, None, (2, 2), (1, 1), (1, 1), 1);  out_132 = l_self_modules_layer4_modules_0_modules_conv2_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:151 in forward, code: out = self.bn2(out)
        add_: "i64[]" = l_self_modules_layer4_modules_0_modules_bn2_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_0_modules_bn2_buffers_num_batches_tracked_ = add_ = None
        batch_norm: "f32[32, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d, l_self_modules_layer4_modules_0_modules_bn2_buffers_running_mean_, l_self_modules_layer4_modules_0_modules_bn2_buffers_running_var_, l_self_modules_layer4_modules_0_modules_bn2_parameters_weight_, l_self_modules_layer4_modules_0_modules_bn2_parameters_bias_, True, 0.1, 1e-05);  conv2d = l_self_modules_layer4_modules_0_modules_bn2_buffers_running_mean_ = l_self_modules_layer4_modules_0_modules_bn2_buffers_running_var_ = l_self_modules_layer4_modules_0_modules_bn2_parameters_weight_ = l_self_modules_layer4_modules_0_modules_bn2_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:152 in forward, code: out = self.relu(out)
        relu: "f32[32, 512, 7, 7]" = torch.nn.functional.relu(batch_norm, inplace = True);  batch_norm = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:154 in forward, code: out = self.conv3(out)
        conv2d_1: "f32[32, 2048, 7, 7]" = torch.conv2d(relu, l_self_modules_layer4_modules_0_modules_conv3_parameters_weight_, None, (1, 1), (0, 0), (1, 1), 1);  relu = l_self_modules_layer4_modules_0_modules_conv3_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:155 in forward, code: out = self.bn3(out)
        add__1: "i64[]" = l_self_modules_layer4_modules_0_modules_bn3_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_0_modules_bn3_buffers_num_batches_tracked_ = add__1 = None
        batch_norm_1: "f32[32, 2048, 7, 7]" = torch.nn.functional.batch_norm(conv2d_1, l_self_modules_layer4_modules_0_modules_bn3_buffers_running_mean_, l_self_modules_layer4_modules_0_modules_bn3_buffers_running_var_, l_self_modules_layer4_modules_0_modules_bn3_parameters_weight_, l_self_modules_layer4_modules_0_modules_bn3_parameters_bias_, True, 0.1, 1e-05);  conv2d_1 = l_self_modules_layer4_modules_0_modules_bn3_buffers_running_mean_ = l_self_modules_layer4_modules_0_modules_bn3_buffers_running_var_ = l_self_modules_layer4_modules_0_modules_bn3_parameters_weight_ = l_self_modules_layer4_modules_0_modules_bn3_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:158 in forward, code: identity = self.downsample(x)
        conv2d_2: "f32[32, 2048, 7, 7]" = torch.conv2d(out_129, l_self_modules_layer4_modules_0_modules_downsample_modules_0_parameters_weight_, None, (2, 2), (0, 0), (1, 1), 1);  out_129 = l_self_modules_layer4_modules_0_modules_downsample_modules_0_parameters_weight_ = None
        add__2: "i64[]" = l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_num_batches_tracked_ = add__2 = None
        batch_norm_2: "f32[32, 2048, 7, 7]" = torch.nn.functional.batch_norm(conv2d_2, l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_mean_, l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_var_, l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_weight_, l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_bias_, True, 0.1, 1e-05);  conv2d_2 = l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_mean_ = l_self_modules_layer4_modules_0_modules_downsample_modules_1_buffers_running_var_ = l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_weight_ = l_self_modules_layer4_modules_0_modules_downsample_modules_1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:160 in forward, code: out += identity
        batch_norm_1 += batch_norm_2;  iadd: "f32[32, 2048, 7, 7]" = batch_norm_1;  batch_norm_1 = batch_norm_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:161 in forward, code: out = self.relu(out)
        relu_1: "f32[32, 2048, 7, 7]" = torch.nn.functional.relu(iadd, inplace = True);  iadd = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:146 in forward, code: out = self.conv1(x)
        conv2d_3: "f32[32, 512, 7, 7]" = torch.conv2d(relu_1, l_self_modules_layer4_modules_1_modules_conv1_parameters_weight_, None, (1, 1), (0, 0), (1, 1), 1);  l_self_modules_layer4_modules_1_modules_conv1_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:147 in forward, code: out = self.bn1(out)
        add__3: "i64[]" = l_self_modules_layer4_modules_1_modules_bn1_buffers_num_batches_tracked_.add_(1);  l_self_modules_layer4_modules_1_modules_bn1_buffers_num_batches_tracked_ = add__3 = None
        batch_norm_3: "f32[32, 512, 7, 7]" = torch.nn.functional.batch_norm(conv2d_3, l_self_modules_layer4_modules_1_modules_bn1_buffers_running_mean_, l_self_modules_layer4_modules_1_modules_bn1_buffers_running_var_, l_self_modules_layer4_modules_1_modules_bn1_parameters_weight_, l_self_modules_layer4_modules_1_modules_bn1_parameters_bias_, True, 0.1, 1e-05);  conv2d_3 = l_self_modules_layer4_modules_1_modules_bn1_buffers_running_mean_ = l_self_modules_layer4_modules_1_modules_bn1_buffers_running_var_ = l_self_modules_layer4_modules_1_modules_bn1_parameters_weight_ = l_self_modules_layer4_modules_1_modules_bn1_parameters_bias_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torchvision/models/resnet.py:148 in forward, code: out = self.relu(out)
        relu_2: "f32[32, 512, 7, 7]" = torch.nn.functional.relu(batch_norm_3, inplace = True);  batch_norm_3 = None
        return (relu_2, relu_1)
