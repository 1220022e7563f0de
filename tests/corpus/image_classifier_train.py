"""Train a small CNN image classifier on an in-memory dataset.

The transforms mirror what torchvision offers (random crop, horizontal flip, normalize) but are
written by hand so that the script only needs torch and numpy.
"""

import argparse
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2470, 0.2435, 0.2616)


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class RandomCrop:
    def __init__(self, size: int, padding: int = 4):
        self.size = size
        self.padding = padding

    def __call__(self, img):
        img = F.pad(img, [self.padding] * 4, mode="reflect")
        top = random.randint(0, img.shape[-2] - self.size)
        left = random.randint(0, img.shape[-1] - self.size)
        return img[..., top:top + self.size, left:left + self.size]


class RandomHorizontalFlip:
    def __init__(self, p: float = 0.5):
        self.p = p

    def __call__(self, img):
        if random.random() < self.p:
            img = img.flip(-1)
        return img


class Normalize:
    def __init__(self, mean, std):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, img):
        return (img - self.mean) / self.std


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for transform in self.transforms:
            img = transform(img)
        return img


class ImageTensorDataset(Dataset):
    def __init__(self, images: np.ndarray, labels: np.ndarray, transform=None):
        # uint8 HWC images, as stored on disk
        self.images = images
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        img = torch.from_numpy(self.images[index]).permute(2, 0, 1).float().div(255)
        if self.transform is not None:
            img = self.transform(img)
        return img, int(self.labels[index])


class SmallCNN(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(128, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.classifier(torch.flatten(x, 1))


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        logits = model(images)
        loss = F.cross_entropy(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * targets.size(0)
        correct += (logits.argmax(dim=1) == targets).sum().item()
        seen += targets.size(0)
    return total_loss / seen, correct / seen


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, seen = 0, 0
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        preds = model(images).argmax(dim=1)
        correct += (preds == targets).sum().item()
        seen += targets.size(0)
    return correct / seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    set_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    images = np.random.randint(0, 256, size=(512, 32, 32, 3), dtype=np.uint8)
    labels = np.random.randint(0, 10, size=512)
    train_tf = Compose([RandomCrop(32), RandomHorizontalFlip(), Normalize(MEAN, STD)])
    test_tf = Normalize(MEAN, STD)
    train_loader = DataLoader(ImageTensorDataset(images[:448], labels[:448], train_tf), batch_size=64,
                              shuffle=True, pin_memory=torch.cuda.is_available())
    test_loader = DataLoader(ImageTensorDataset(images[448:], labels[448:], test_tf), batch_size=64)

    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    for epoch in range(args.epochs):
        loss, acc = train_one_epoch(model, train_loader, optimizer, device)
        scheduler.step()
        print(f"epoch {epoch}: loss {loss:.3f} train acc {acc:.3f} test acc {evaluate(model, test_loader, device):.3f}")
    torch.save(model.state_dict(), "small_cnn.pt")


if __name__ == "__main__":
    main()
