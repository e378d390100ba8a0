"""JAX (XLA's CUDA plugin): jit, grad, matmul, a training step."""
import jax
import jax.numpy as jnp

from _checks import check, finish, r, step

devs = jax.devices()
check("gpu devices", [d.platform for d in devs], devs[0].platform == "gpu")


def jit_grad():
    f = jax.jit(lambda x: jnp.sin(x) * 2 + 1)
    check("jit", r(f(jnp.arange(1000.0)).sum()))
    check("grad", r(jax.grad(lambda x: jnp.sum(x ** 3))(jnp.arange(4.0)).sum()))


def matmul():
    ka, kb = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(ka, (512, 512))
    b = jax.random.normal(kb, (512, 512))
    check("matmul", r(jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST).sum(), 3))


def training():
    key = jax.random.PRNGKey(0)
    _, kb = jax.random.split(key)
    xs = jax.random.normal(kb, (128, 64))
    ys = jnp.arange(128) % 10

    def loss(w):
        return -jnp.mean(jax.nn.log_softmax(xs @ w)[jnp.arange(128), ys])

    step_fn = jax.jit(lambda w: w - 0.1 * jax.grad(loss)(w))
    w = jax.random.normal(key, (64, 10)) * 0.1
    losses = []
    for _ in range(5):
        losses.append(r(loss(w)))
        w = step_fn(w)
    check("training losses", losses, losses[-1] < losses[0])


for name, part in [("jit and grad", jit_grad), ("matmul", matmul), ("training", training)]:
    step(name, part)
finish()
