# The JAX counterpart of train_moved.py (run_migrate.sh, model "jax"): a
# deterministic MLP trained with a jitted step, which XLA runs as CUDA graphs
# (command buffers) it updates; its loop and protocol moved_run.py's.
#   usage: train_moved_jax.py jax STEPS [AT READY_FILE MOVED_FILE]
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # memory as used, not 75% of the GPU
os.environ.setdefault("XLA_FLAGS", "--xla_gpu_deterministic_ops=true")
import jax
import jax.numpy as jnp

import moved_run

_, steps, at, ready, moved = moved_run.arguments()
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


def one_step():
    global params
    params, loss = step(params)
    return float(loss)


moved_run.train(one_step, steps, at, ready, moved)
