"""A DCGAN-style generator/discriminator pair trained on random 32x32 images, with per-epoch timing
that synchronizes before reading the clock."""

import time

import torch
import torch.nn as nn

LATENT = 64


def init_weights(module: nn.Module) -> None:
    if isinstance(module, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(module.weight, 0.0, 0.02)
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.normal_(module.weight, 1.0, 0.02)
        nn.init.zeros_(module.bias)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(LATENT, 128, 4, 1, 0, bias=False), nn.BatchNorm2d(128), nn.ReLU(True),
            nn.ConvTranspose2d(128, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(True),
            nn.ConvTranspose2d(64, 32, 4, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(True),
            nn.ConvTranspose2d(32, 3, 4, 2, 1, bias=False), nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z.view(z.size(0), LATENT, 1, 1))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 32, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
            nn.Conv2d(32, 64, 4, 2, 1, bias=False), nn.BatchNorm2d(64), nn.LeakyReLU(0.2, True),
            nn.Conv2d(64, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2, True),
            nn.Conv2d(128, 1, 4, 1, 0, bias=False),
        )

    def forward(self, x):
        return self.net(x).view(-1)


def main(epochs: int = 2, steps_per_epoch: int = 20, batch: int = 64) -> None:
    torch.manual_seed(999)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gen, disc = Generator().to(device), Discriminator().to(device)
    gen.apply(init_weights)
    disc.apply(init_weights)
    criterion = nn.BCEWithLogitsLoss()
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_noise = torch.randn(16, LATENT, device=device)

    for epoch in range(epochs):
        start = time.time()
        for _ in range(steps_per_epoch):
            real = torch.rand(batch, 3, 32, 32, device=device) * 2 - 1
            noise = torch.randn(batch, LATENT, device=device)
            fake = gen(noise)

            opt_d.zero_grad()
            loss_d = criterion(disc(real), torch.ones(batch, device=device)) + \
                criterion(disc(fake.detach()), torch.zeros(batch, device=device))
            loss_d.backward()
            opt_d.step()

            opt_g.zero_grad()
            loss_g = criterion(disc(fake), torch.ones(batch, device=device))
            loss_g.backward()
            opt_g.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        print(f"epoch {epoch}: D {loss_d.item():.3f} G {loss_g.item():.3f} ({time.time() - start:.1f}s)")

    with torch.no_grad():
        samples = gen(fixed_noise).cpu()
    torch.save(samples, "gan_samples.pt")


if __name__ == "__main__":
    main()
