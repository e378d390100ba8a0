"""JAX (XLA's CUDA plugin): jit, grad, matmul, a training step."""
import sys

import jax
import jax.numpy as jnp

ok = True


def check(name, value, cond=True):
    global ok
    ok &= bool(cond)
    print(f"{name}: {value}{'' if cond else '  FAILED'}")


def r(x, digits=4):
    return float(f"{float(x):.{digits}g}")


devs = jax.devices()
check("gpu devices", [d.platform for d in devs], devs[0].platform == "gpu")
f = jax.jit(lambda x: jnp.sin(x) * 2 + 1)
check("jit", r(f(jnp.arange(1000.0)).sum()))
check("grad", r(jax.grad(lambda x: jnp.sum(x ** 3))(jnp.arange(4.0)).sum()))
key = jax.random.PRNGKey(0)
ka, kb = jax.random.split(key)
a = jax.random.normal(ka, (512, 512))
b = jax.random.normal(kb, (512, 512))
c = jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)
check("matmul", r(c.sum(), 3))
w = jax.random.normal(key, (64, 10)) * 0.1
xs = jax.random.normal(kb, (128, 64))
ys = jnp.arange(128) % 10


def loss(w):
    logits = xs @ w
    return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(128), ys])


step = jax.jit(lambda w: w - 0.1 * jax.grad(loss)(w))
losses = []
for _ in range(5):
    losses.append(r(loss(w)))
    w = step(w)
check("training losses", losses, losses[-1] < losses[0])
print("RESULT PASS" if ok else "RESULT FAIL")
sys.exit(0 if ok else 1)
