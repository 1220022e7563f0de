# kind: must-stay-loop
# family: recurrence
# origin: streaming clustering (MacQueen's online k-means): each point pulls its nearest centroid towards it immediately
# why: a point's nearest centroid depends on the moves made by all earlier points; the batch k-means step (assign every point, then average) gives other centroids
# tags: function-param near-miss multi-statement
import torch


def online_kmeans(points, centroids):
    centroids = centroids.clone()
    counts = torch.ones(len(centroids))
    for x in points:
        k = ((centroids - x) ** 2).sum(dim=1).argmin()
        counts[k] += 1
        centroids[k] += (x - centroids[k]) / counts[k]
    return centroids


points = torch.randn(200, 2)
init = points[:4].clone()
centroids = online_kmeans(points[4:], init)
