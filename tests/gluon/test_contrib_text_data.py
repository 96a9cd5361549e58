"""gluon.contrib.data.text: WikiText windows and vocabulary (values as MXNet 1.9.1 gives
for the same file), and the zip archive read from a local root."""
import zipfile

import pytest

import sparsym as mx
from sparsym.gluon.contrib.data.text import WikiText2

TOKENS = " = Valkyria = \n\n Senjo no Valkyria 3 : the game \n the game is a game .\n\n" \
         " = Gameplay = \n"


def test_windows_and_vocabulary_match_mxnet(tmp_path):
    (tmp_path / "wiki.train.tokens").write_text(TOKENS)
    d = WikiText2(root=str(tmp_path), seq_len=4)
    assert len(d) == 5
    assert d[0][0].asnumpy().tolist() == [2, 4, 2, 1]
    assert d[0][1].asnumpy().tolist() == [4, 2, 1, 10]
    assert d.vocabulary.idx_to_token[:8] == ["<unk>", "<eos>", "=", "game", "Valkyria", "the",
                                             ".", "3"]
    assert d.frequencies["="] == 4
    loader = mx.gluon.data.DataLoader(d, batch_size=2, last_batch="discard")
    assert [b[0].shape for b in loader] == [(2, 4), (2, 4)]


def test_archive_in_root_is_extracted_and_segments_checked(tmp_path):
    with zipfile.ZipFile(tmp_path / "wikitext-2-v1.zip", "w") as zf:
        zf.writestr("wikitext-2/wiki.valid.tokens", TOKENS)
    d = WikiText2(root=str(tmp_path), segment="validation", seq_len=3)
    assert (tmp_path / "wiki.valid.tokens").exists() and len(d) == 7
    with pytest.raises(ValueError, match="segment must be one of"):
        WikiText2(root=str(tmp_path), segment="dev")
