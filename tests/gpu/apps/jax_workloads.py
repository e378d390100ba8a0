"""JAX as users run it, with XLA's default flags (command buffers on, so
jitted programs become CUDA graphs with kernel, copy, memset and
conditional nodes): optax training, scan, vmap, cuDNN convolutions,
attention, linear algebra, random numbers, sorting and loops."""
import jax
import jax.numpy as jnp
import optax

from _checks import check, finish, r, step

devs = jax.devices()
check("gpu devices", [d.platform for d in devs], devs[0].platform == "gpu")
key = jax.random.PRNGKey(0)


def mlp_training():
    k1, k2, k3 = jax.random.split(key, 3)
    xs = jax.random.normal(k1, (256, 32))
    ys = (xs @ jax.random.normal(k2, (32, 1)) > 0).astype(jnp.float32)[:, 0]
    params = {"w1": jax.random.normal(k3, (32, 64)) * 0.1, "b1": jnp.zeros(64),
              "w2": jax.random.normal(k2, (64, 1)) * 0.1, "b2": jnp.zeros(1)}

    def loss(p, x, y):
        h = jax.nn.gelu(x @ p["w1"] + p["b1"])
        logits = (h @ p["w2"] + p["b2"])[:, 0]
        return optax.sigmoid_binary_cross_entropy(logits, y).mean()

    opt = optax.adamw(1e-2)
    state = opt.init(params)

    @jax.jit
    def train_step(p, s, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, value

    losses = []
    for _ in range(30):
        params, state, value = train_step(params, state, xs, ys)
        losses.append(float(value))
    check("optax losses", [r(losses[0]), r(losses[-1], 3)], losses[-1] < 0.5 * losses[0])


def scan_rnn():
    kx, kw = jax.random.split(key)
    xs = jax.random.normal(kx, (100, 16))
    w = jax.random.normal(kw, (16, 16)) * 0.3

    @jax.jit
    def run(xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()
        return jax.lax.scan(cell, jnp.zeros(16), xs)

    h, sums = run(xs)
    check("scan", [r(h.sum()), r(sums.sum())])
    g = jax.jit(jax.grad(lambda xs: run(xs)[0].sum()))(xs)
    check("scan grad", r(jnp.abs(g).sum()))


def vmap_grads():
    kx, kw = jax.random.split(key)
    xs = jax.random.normal(kx, (64, 8))
    w = jax.random.normal(kw, (8,))
    per_example = jax.jit(jax.vmap(jax.grad(lambda w, x: jnp.sin(x @ w) ** 2), in_axes=(None, 0)))(w, xs)
    check("vmap per-example grads", [per_example.shape[0], r(per_example.sum())])
    batched = jax.jit(jax.vmap(jnp.matmul))(jax.random.normal(kx, (10, 32, 16)), jax.random.normal(kw, (10, 16, 8)))
    check("vmap matmul", r(batched.sum(), 3))


def convolutions():
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (8, 3, 32, 32))
    w = jax.random.normal(kw, (16, 3, 3, 3)) * 0.1

    @jax.jit
    def net(w, x):
        y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        y = jax.nn.relu(y)
        return jax.lax.conv_general_dilated(y, jnp.ones((4, 16, 3, 3)) * 0.01, (2, 2), "VALID",
                                            dimension_numbers=("NCHW", "OIHW", "NCHW"))

    y = net(w, x)
    check("conv forward", [list(y.shape), r(y.sum(), 3)])
    g = jax.jit(jax.grad(lambda w: net(w, x).sum()))(w)
    check("conv grad", r(jnp.abs(g).sum(), 3))


def attention():
    kq, kk, kv = jax.random.split(key, 3)
    q = jax.random.normal(kq, (2, 128, 4, 64), dtype=jnp.float16)
    k = jax.random.normal(kk, (2, 128, 4, 64), dtype=jnp.float16)
    v = jax.random.normal(kv, (2, 128, 4, 64), dtype=jnp.float16)
    out = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=True))(q, k, v)
    s = jnp.einsum("bqhd,bkhd->bhqk", q.astype(jnp.float32), k.astype(jnp.float32)) / 8.0
    s = jnp.where(jnp.tril(jnp.ones((128, 128), bool)), s, -jnp.inf)
    ref = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v.astype(jnp.float32))
    err = float(jnp.abs(out.astype(jnp.float32) - ref).max())
    check("attention", r(out.astype(jnp.float32).sum(), 2), err < 2e-2)


def linalg():
    ka, kb = jax.random.split(key)
    a = jax.random.normal(ka, (64, 64))
    spd = a @ a.T + 64 * jnp.eye(64)
    b = jax.random.normal(kb, (64, 4))
    # XLA multiplies float32 matrices in TF32 by default: errors relative to the matrices' size.
    def close(x, ref):
        return float(jnp.abs(x - ref).max() / jnp.abs(ref).max()) < 5e-3

    chol = jnp.linalg.cholesky(spd)
    check("cholesky", r(chol.sum(), 3), close(chol @ chol.T, spd))
    x = jnp.linalg.solve(spd, b)
    check("solve", r(x.sum(), 3), close(spd @ x, b))
    q, rr = jnp.linalg.qr(a)
    check("qr", r(jnp.abs(rr).sum(), 3), close(q @ rr, a))
    s = jnp.linalg.svd(a, compute_uv=False)
    check("svd", r(s.sum(), 4))
    w = jnp.linalg.eigh(spd)[0]
    check("eigh", r(w.sum(), 4))
    check("inv", r(jnp.trace(jnp.linalg.inv(spd) @ spd), 4))


def random_numbers():
    ks = jax.random.split(key, 4)
    check("normal", r(jax.random.normal(ks[0], (10000,)).mean(), 3))
    check("uniform", r(jax.random.uniform(ks[1], (10000,)).sum(), 5))
    check("categorical", int(jax.random.categorical(ks[2], jnp.log(jnp.arange(1.0, 11.0)), shape=(1000,)).sum()))
    check("permutation", [int(v) for v in jax.random.permutation(ks[3], 10)])


def sorting():
    x = jax.random.normal(key, (100000,))
    s = jnp.sort(x)
    check("sort", [r(s[0]), r(s[-1])], bool(jnp.all(s[1:] >= s[:-1])))
    idx = jnp.argsort(x)
    check("argsort", int(idx[:10].sum()))
    vals, _ = jax.lax.top_k(x, 5)
    check("top_k", [r(v) for v in vals])


def loops():
    @jax.jit
    def collatz_steps(n):
        def body(c):
            n, steps = c
            return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), steps + 1
        return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]
    check("while_loop", int(collatz_steps(27)))
    check("fori_loop", r(jax.jit(lambda x: jax.lax.fori_loop(0, 50, lambda i, v: v * 0.99 + i, x))(1.0)))
    check("cond", r(jax.jit(lambda x: jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x))(jnp.arange(5.0)).sum()))
    check("cumsum", r(jax.jit(jnp.cumsum)(jnp.arange(1000.0))[-1]))


for name, part in [("mlp training", mlp_training), ("scan", scan_rnn), ("vmap", vmap_grads),
                   ("convolutions", convolutions), ("attention", attention), ("linalg", linalg),
                   ("random", random_numbers), ("sorting", sorting), ("loops", loops)]:
    step(name, part)
finish()
