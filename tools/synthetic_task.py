"""A synthetic 10-class image task, to give an image model the class-score margins of a trained one.

With random weights an image model's class scores lie close together: on a Zen 4 EPYC,
OpenVINO's own bf16 reordered the top class of ResNet-18, MobileNetV3-Small and EfficientNet-B0
on 3-5 of 100 random inputs at a cosine similarity of 0.9994 or more, so no reduced-precision
candidate could meet a top-1 agreement budget there, however faithful. No trained weights can be
downloaded here, so tools/make_models.py --task synthetic trains a model briefly on this task:
each class is a smooth random pattern (fixed seed), an input is its class's pattern plus
Gaussian noise. Trained so, the model's scores for the task's inputs have real margins, and its
int8 variants calibrate, and are judged, on the task's inputs as a deployed model's are on its
data: calibration, the tuner's held-out samples (<name>.samples/, aitune-tune --sample) and the
peers harness's held-out inputs each come from seeds of their own (SEEDS), so they never overlap.
"""
import functools
import os

import torch

CLASSES = 10
NOISE = 0.5  # the noise's standard deviation; the patterns have standard deviation 1
PATTERN_SIDE = 8  # each pattern is 8x8 random values, upsampled: smooth, as images are
LEARNED_LOSS = 0.05  # training ends once the last 10 steps' mean cross-entropy is under this
# First seeds of each use of the task's inputs: input i of a use is drawn from its seed + i.
SEEDS = {"train": 100_000, "calibration": 200_000, "tuner": 300_000, "harness": 400_000,
         "repair": 500_000}


def is_image(specs):
    """Whether the inputs `specs` (aitune_export.inputs.Input) are one float image, 1xCxHxW:
    what this task makes."""
    return (len(specs) == 1 and len(specs[0].shape) == 4 and specs[0].shape[0] == 1
            and specs[0].dtype.is_floating_point)


@functools.lru_cache(maxsize=4)  # training draws a batch a step, all of one shape
def patterns(shape):
    """The classes' patterns for inputs of `shape` (1xCxHxW, a tuple): CLASSES x C x H x W."""
    generator = torch.Generator().manual_seed(1234)
    small = torch.randn(CLASSES, shape[1], PATTERN_SIDE, PATTERN_SIDE, generator=generator)
    large = torch.nn.functional.interpolate(small, size=tuple(shape[2:]), mode="bilinear",
                                            align_corners=False)
    return large / large.std()


def draw(shape, count, seed):
    """`count` inputs of the task for `shape` and their classes: ([(input,), ...], [class, ...]),
    input i from seed `seed` + i (so a use's inputs do not depend on how many it draws)."""
    class_patterns = patterns(tuple(shape))
    inputs, labels = [], []
    for i in range(count):
        generator = torch.Generator().manual_seed(seed + i)
        label = int(torch.randint(0, CLASSES, (1,), generator=generator))
        noise = torch.randn(tuple(shape), generator=generator)
        inputs.append((class_patterns[label].unsqueeze(0) + NOISE * noise,))
        labels.append(label)
    return inputs, labels


def train(module, shape, max_steps=400, batch=16, log=print):
    """Trains `module` (class scores out; its first CLASSES classes are the task's) on the task,
    `batch` inputs a step, until the last 10 steps' mean loss is under LEARNED_LOSS or after
    `max_steps`, then sets its BatchNorm statistics from the task's inputs and puts it in eval
    mode; returns its accuracy on 100 inputs it never saw."""
    norms = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for norm in norms:
        norm.momentum = 0.1  # make_models.calibrate_batchnorm left a cumulative average
    # At 1e-3 SqueezeNet 1.1 (no BatchNorm, a ReLU after its classifier) went dead: every class
    # score 0, the task unlearned after 60 steps. At 3e-4 it learns in about 160 steps, and
    # ResNet-18 and MobileNetV3-Small in under 60.
    optimizer = torch.optim.Adam(module.parameters(), lr=3e-4)
    module.train()
    losses = []
    while len(losses) < max_steps and not (
            len(losses) >= 10 and sum(losses[-10:]) / 10 < LEARNED_LOSS):
        inputs, labels = draw(shape, batch, SEEDS["train"] + len(losses) * batch)
        loss = torch.nn.functional.cross_entropy(module(torch.cat([x for (x,) in inputs])),
                                                 torch.tensor(labels))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    # Statistics of the final weights, over the task's inputs (as a trained model's are over its
    # data): the running averages lag behind weights that moved during training.
    with torch.no_grad():
        for norm in norms:
            norm.reset_running_stats()
            norm.momentum = None
        for start in range(0, 64, batch):
            inputs, _ = draw(shape, batch, SEEDS["train"] + (len(losses) + 1) * batch + start)
            module(torch.cat([x for (x,) in inputs]))
    module.eval()
    inputs, labels = draw(shape, 100, SEEDS["train"] - 1000)
    with torch.no_grad():
        right = sum(int(module(x).argmax()) == label for (x,), label in zip(inputs, labels))
    log(f"trained on the synthetic task, {len(losses)} steps of {batch}: last 10 steps' loss "
        f"{sum(losses[-10:]) / 10:.3f}, {right} of 100 unseen inputs classified right")
    if right < 90:
        log("WARNING: the model did not learn the task: its class scores may still be near ties, "
            "and top-1 agreement then judges rounding, not precision")
    return right / 100


def save_samples(directory, shape, count=100):
    """Writes `count` held-out task inputs for aitune-tune --sample: directory/NNN.pt, each a
    tuple of the forward() arguments (torch.save). Returns their paths."""
    os.makedirs(directory, exist_ok=True)
    inputs, _ = draw(shape, count, SEEDS["tuner"])
    paths = []
    for i, sample in enumerate(inputs):
        paths.append(os.path.join(directory, f"{i:03d}.pt"))
        torch.save(sample, paths[-1])
    return paths


def sample_files(models_dir, name):
    """The tuner's held-out samples of model `name` where make_models.py --task synthetic
    trained it (<models_dir>/<name>.samples/), sorted; [] for a model with random weights."""
    directory = os.path.join(models_dir, f"{name}.samples")
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".pt"))
