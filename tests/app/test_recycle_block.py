"""Step through with token recycling and block verification: where each recycled node came from, block's weights
beside token-wise's bars, and block verification with a tree method refused by one st.error."""
import os

os.environ.setdefault("SPECVIZ_TINY", "1")

import pytest  # noqa: E402

from tests.app.test_app_part1 import (  # noqa: E402
    decoder,
    errors,
    step_page,
    text,
    warm as part1_warm,  # noqa: E402
)


@pytest.fixture(scope="module")
def warm():
    """test_app_part1's warm-up (the tokenizer and tiny models loaded once), for this module."""
    return part1_warm.__wrapped__()


def test_recycle_says_which_step_each_node_came_from(warm):
    at = step_page(warm, stp_method="recycle", stp_new=8)
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    dec = decoder(at)
    assert any(r.n_drafted for r in dec.steps)
    shown = max(i for i, r in enumerate(dec.steps) if r.n_drafted) + 1
    at.slider(key="stp_show").set_value(shown).run()
    assert "recycled from" in text(at)


def test_block_verification_shows_its_weights_and_refuses_a_tree(warm):
    at = step_page(warm, stp_method="lookup", stp_n=1, stp_temp=0.8)
    at.radio(key="stp_verify").set_value("block").run()
    at.button(key="stp_one").click().run()
    assert errors(at) == []
    rec = decoder(at).steps[0]
    assert rec.verify == "block" and rec.block is not None
    if rec.n_drafted:
        assert "token-wise verification, with the same uniforms, would have kept" in text(at)
    at = step_page(warm, stp_method="recycle")
    at.radio(key="stp_verify").set_value("block").run()
    assert any("block verification takes a chain" in e for e in errors(at))
