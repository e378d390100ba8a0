# The JAX counterpart of train_moved.py (run_migrate.sh, model "jax"): a
# deterministic MLP trained with a jitted step, which XLA runs as CUDA graphs
# (command buffers) it updates; each step's loss printed exactly (float.hex).
# The same READY_FILE / MOVED_FILE protocol as train_moved.py.
#   usage: train_moved_jax.py jax STEPS [AT READY_FILE MOVED_FILE]
import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # memory as used, not 75% of the GPU
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_deterministic_ops=true")
import jax
import jax.numpy as jnp

steps = int(sys.argv[2])
at, ready, moved = (int(sys.argv[3]), sys.argv[4], sys.argv[5]) if len(sys.argv) > 5 else (None, None, None)
key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
params = {
    "w1": jax.random.normal(k1, (512, 1024)) * 0.03, "b1": jnp.zeros(1024),
    "w2": jax.random.normal(k2, (1024, 256)) * 0.03, "b2": jnp.zeros(256),
}
data = jax.random.normal(k3, (256, 512))
target = jax.random.normal(k4, (256, 256))


def loss_fn(p):
    h = jax.nn.relu(data @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - target) ** 2)


@jax.jit
def step(p):
    loss, grads = jax.value_and_grad(loss_fn)(p)
    return jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, p, grads), loss


start = time.time()
for i in range(steps):
    params, loss = step(params)
    print(f"STEP {i} {float(loss).hex()}", flush=True)
    if at is not None and i == at:
        with open(ready, "w") as f:
            f.write(str(os.getpid()))
    if at is not None and i >= at + 20 and not os.path.exists(moved):
        deadline = time.time() + 60
        while not os.path.exists(moved) and time.time() < deadline:
            time.sleep(0.01)
print(f"END {steps} steps in {time.time() - start:.2f} s", flush=True)
