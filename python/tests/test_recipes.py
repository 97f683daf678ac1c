"""blr.recipe: the C++ recipe table as keyword arguments (docs/torch.md, Recipes)."""

import math

import pytest
import torch

import blr
from conftest import small_model, small_problem


def test_recipes_are_the_cpp_table():
    names = [r["name"] for r in blr.recipes()]
    assert names[:5] == ["image-small", "image-resnet", "lm-pretrain", "finetune", "tabular"]
    lm = next(r for r in blr.recipes() if r["name"] == "lm-pretrain")
    assert lm["schedule"] == "warmup-cosine" and lm["grad_clip"] == 1.0
    assert all(o["source"] for r in blr.recipes() for o in r["optimizers"])


def test_recipe_gives_keyword_arguments_a_run_can_use():
    x, y = small_problem()
    model = small_model()
    kw = blr.recipe("image-resnet", model=model, n_train=len(y))
    assert kw["hess_init"] == 0.5 and kw["weight_decay"] == 2e-4 and kw["ess"] == float(len(y))
    assert math.isinf(kw["clip_radius"])
    assert kw.schedule == "warmup-cosine" and kw.warmup_share == pytest.approx(0.025)
    assert kw.name == "image-resnet" and kw.optimizer == "ivon" and "ivon-experiments" not in kw
    assert "train_ivon.sh" in kw.source
    optimizer = blr.IVON(**kw)
    group = optimizer.param_groups[0]
    assert group["hess_init"] == 0.5 and group["lr"] == 1.0 and group["ess"] == float(len(y))
    with optimizer.sampled_params(train=True):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()


def test_overrides_win_and_the_recipe_fixes_ess_where_it_names_one():
    kw = blr.recipe("lm-pretrain", n_train=1000, lr=300.0)
    assert kw["lr"] == 300.0 and kw["ess"] == 1e10 and kw["clip_radius"] == 1e-3
    adamw = blr.recipe("lm-pretrain", optimizer="adamw", model=small_model())
    assert adamw["betas"] == (0.9, 0.95) and adamw["weight_decay"] == 0.1 and "ess" not in adamw
    torch.optim.AdamW(**adamw)  # torch.optim's own keywords


def test_bad_names_are_one_sentence():
    with pytest.raises(blr.Error, match="Unknown recipe 'image'"):
        blr.recipe("image")
    with pytest.raises(blr.Error, match="Recipe 'lm-pretrain' has no settings for sgd"):
        blr.recipe("lm-pretrain", optimizer="sgd")
    with pytest.raises(blr.Error, match="n_train must be a positive whole number"):
        blr.recipe("image-small", n_train=2.5)
    with pytest.raises(blr.Error, match="beta2"):
        blr.recipe("image-small", beta2=2.0)


def test_temperature_scaling_and_ensembles_are_the_cpp_ones():
    torch.manual_seed(0)
    z = torch.randn(4000, 4, dtype=torch.float64) * 3
    y = torch.multinomial(torch.softmax(z / 2, 1), 1).squeeze(1)
    lp = torch.log_softmax(z, 1)
    fit = blr.fit_temperature(lp, y)
    assert 1.5 < fit["temperature"] < 2.6 and fit["nll_after"] < fit["nll_before"]
    scaled = blr.scale_temperature(lp, fit["temperature"])
    assert blr.metrics(scaled, y)["nll"] == pytest.approx(fit["nll_after"], abs=1e-12)
    assert torch.equal(scaled.argmax(1), lp.argmax(1))
    members = [torch.log_softmax(torch.randn(5, 3, dtype=torch.float64), 1) for _ in range(3)]
    expected = torch.stack([m.exp() for m in members]).mean(0).log()
    assert torch.allclose(blr.ensemble(members), expected, atol=1e-14)
    with pytest.raises(blr.Error, match="another shape"):
        blr.ensemble([members[0], members[1][:2]])


def test_posterior_diagnostics_are_the_cpp_ones():
    x, y = small_problem()
    model = small_model()
    optimizer = blr.IVON(model.parameters(), lr=0.1, ess=len(y), hess_init=0.5, beta2=0.99999,
                         clip_radius=1e-3)
    for _ in range(3):
        with optimizer.sampled_params(train=True):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    d = optimizer.posterior_diagnostics()
    assert d["steps"] == 3 and d["initial_curvature"] == 0.5
    assert d["share_at_initial"] == 1.0  # 1 - beta2^3 of h can have moved: 3e-5
    assert len(d["curvature_quantiles"]) == len(d["levels"]) == 7
    sigma = torch.cat([v.sqrt().flatten() for v in optimizer.posterior_variance()])
    assert d["sigma_quantiles"][-1] == pytest.approx(sigma.max().item(), rel=1e-6)
    assert 0.0 <= d["share_clipped"] <= 1.0
