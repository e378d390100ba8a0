"""PyTorch on the GPU: device query, tensor ops, cuBLAS (fp32, bf16), cuDNN,
cuFFT, cuSOLVER, attention, a CNN and a small transformer trained for a few
steps, CUDA graphs. Prints rounded results (compared between a local run and
one through rgpu) and RESULT PASS when every check holds."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from _checks import check, finish, r, step

torch.backends.cudnn.benchmark = False
torch.backends.cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
check("cuda available", torch.cuda.is_available(), torch.cuda.is_available())
if not torch.cuda.is_available():
    finish()
dev = torch.device("cuda")
check("device count", torch.cuda.device_count(), torch.cuda.device_count() >= 1)
props = torch.cuda.get_device_properties(0)
check("capability", f"{props.major}.{props.minor}")


def gen(seed):
    return torch.Generator(dev).manual_seed(seed)


def tensor_ops():
    check("ones sum", torch.ones(1000, device=dev).sum().item(), torch.ones(1000, device=dev).sum().item() == 1000)
    x = torch.arange(1 << 20, device=dev, dtype=torch.float32)
    check("elementwise", r((x * 2 + 1).sin().sum()))
    check("sort", torch.sort(torch.randperm(1000, device=dev, generator=gen(1)))[0][:5].tolist())


def matrices(seed=0):
    g = gen(seed)
    return torch.randn(512, 512, device=dev, generator=g), torch.randn(512, 512, device=dev, generator=g)


def matmul():
    a, b = matrices()
    c = a @ b
    ref = a.double().cpu() @ b.double().cpu()
    check("matmul fp32", r(c.sum()), torch.allclose(c.cpu().double(), ref, atol=1e-2))
    cb = (a.bfloat16() @ b.bfloat16()).float()
    check("matmul bf16", r(cb.sum(), 3), (cb.cpu().double() - ref).abs().max().item() < 2.0)
    torch.manual_seed(0)
    lin = nn.Linear(512, 256).to(dev)
    check("linear", r(lin(a).sum().item()))


def images(seed=2):
    g = gen(seed)
    return torch.randn(8, 3, 32, 32, device=dev, generator=g), torch.randn(16, 3, 3, 3, device=dev, generator=g)


def conv():
    img, w = images()
    y = F.conv2d(img, w, padding=1)
    yref = F.conv2d(img.cpu(), w.cpu(), padding=1)
    check("conv2d cudnn", r(y.sum()), torch.allclose(y.cpu(), yref, atol=1e-3))


def fft():
    sig = torch.randn(4096, device=dev, generator=gen(3))
    f = torch.fft.fft(sig)
    check("fft", r(f.abs().sum()), torch.allclose(torch.fft.ifft(f).real, sig, atol=1e-4))


def linalg():
    a, _ = matrices()
    spd = a @ a.T + 512 * torch.eye(512, device=dev)
    rhs = torch.randn(512, 4, device=dev, generator=gen(4))
    sol = torch.linalg.solve(spd, rhs)
    check("linalg solve", r(sol.sum()), torch.allclose(spd @ sol, rhs, atol=1e-3))
    check("cholesky", r(torch.linalg.cholesky(spd).diagonal().sum()))
    check("eigvalsh", r(torch.linalg.eigvalsh(spd)[-1]))


def attention():
    q = torch.randn(2, 4, 128, 64, device=dev, generator=gen(5))
    att = F.scaled_dot_product_attention(q, q, q)
    attref = torch.softmax(q @ q.transpose(-1, -2) / 8.0, -1) @ q
    check("sdpa", r(att.sum()), torch.allclose(att, attref, atol=1e-3))


def train(model, data, target, loss_fn, steps=5):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        opt.step()
        losses.append(r(loss.item()))
    return losses


def cnn():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).to(dev)
    img, _ = images()
    labels = torch.randint(0, 10, (8,), device=dev, generator=gen(6))
    losses = train(model, img, labels, F.cross_entropy)
    check("cnn losses", losses, losses[-1] < losses[0])


def transformer():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    model = nn.Sequential(nn.TransformerEncoder(layer, 2), nn.Linear(64, 64)).to(dev)
    seq = torch.randn(4, 32, 64, device=dev, generator=gen(7))
    losses = train(model, seq, seq, F.mse_loss)
    check("transformer losses", losses, losses[-1] < losses[0])


def cuda_graph():
    static_in = torch.randn(1024, device=dev, generator=gen(8))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            static_out = static_in * 3 + 1
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = static_in * 3 + 1
    static_in.copy_(torch.ones(1024, device=dev))
    graph.replay()
    check("cuda graph", static_out.sum().item(), static_out.sum().item() == 4096)


for name, part in [("tensor ops", tensor_ops), ("matmul", matmul), ("conv", conv), ("fft", fft), ("linalg", linalg),
                   ("attention", attention), ("cnn", cnn), ("transformer", transformer), ("cuda graph", cuda_graph)]:
    step(name, part)
torch.cuda.synchronize()
finish()
