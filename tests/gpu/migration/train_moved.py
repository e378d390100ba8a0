# A deterministic PyTorch training run that a session move interrupts
# (run_migrate.sh), its loop and protocol moved_run.py's.
#   usage: train_moved.py cnn|transformer|graphed STEPS [AT READY_FILE MOVED_FILE]
import torch

import moved_run

kind, steps, at, ready, moved = moved_run.arguments()
torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
torch.use_deterministic_algorithms(True)
dev = torch.device("cuda")

if kind in ("cnn", "graphed"):
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.AvgPool2d(8), torch.nn.Flatten(), torch.nn.Linear(64 * 16, 10)).to(dev)
    data = torch.randn(64, 3, 32, 32, device=dev)
    target = torch.randint(0, 10, (64,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()
    forward = lambda: loss_fn(model(data), target)
else:
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True, dropout=0.0)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=4), torch.nn.Linear(256, 256)).to(dev)
    data = torch.randn(16, 64, 256, device=dev)
    target = torch.randn(16, 64, 256, device=dev)
    forward = lambda: torch.nn.functional.mse_loss(model(data), target)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

def step():
    opt.zero_grad(set_to_none=False)
    loss = forward()
    loss.backward()
    opt.step()
    return loss

if kind == "graphed":
    # A CUDA graph of the whole step (warmed up on a side stream first).
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step()
    run = lambda: (graph.replay(), static_loss)[1]
else:
    run = step

moved_run.train(lambda: run().item(), steps, at, ready, moved)
