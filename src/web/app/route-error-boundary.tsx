import { Component, type ReactNode } from "react";
import { useLocation, type Location } from "react-router";
import { RouteError } from "./route-error.tsx";

/**
 * Shows RouteError instead of the pages when one throws while rendering, or its code fails to load.
 * Going to another page (the back button, say) tries rendering again.
 */
export function RouteErrorBoundary({ children }: { children: ReactNode }) {
  const location = useLocation();
  return <ErrorBoundary location={location}>{children}</ErrorBoundary>;
}

interface BoundaryProps {
  location: Location;
  children: ReactNode;
}

interface BoundaryState {
  failure: { error: unknown } | null;
  location: Location;
}

class ErrorBoundary extends Component<BoundaryProps, BoundaryState> {
  override state: BoundaryState = { failure: null, location: this.props.location };

  static getDerivedStateFromError(error: unknown): Partial<BoundaryState> {
    return { failure: { error } };
  }

  static getDerivedStateFromProps(props: BoundaryProps, state: BoundaryState): Partial<BoundaryState> | null {
    return props.location === state.location ? null : { failure: null, location: props.location };
  }

  override render() {
    return this.state.failure ? <RouteError error={this.state.failure.error} /> : this.props.children;
  }
}
