"""Dense neural-network operators (MXNet 1.9 names): fully connected, embedding,
activations, dropout, batch norm, convolution and pooling."""
